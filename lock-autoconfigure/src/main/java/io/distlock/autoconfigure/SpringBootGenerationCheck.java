package io.distlock.autoconfigure;

import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Stops start-up when this build of distlock runs on the other Spring Boot generation:
 * {@code lock-starter} on Spring Boot 3.5, or {@code lock-starter-boot3} on Spring Boot 4. Either
 * starts otherwise (its auto-configuration looks for the other generation's classes and quietly
 * creates no lock registry), and every locked call then fails.
 *
 * <p>An initializer, not a bean: it runs before the context is refreshed, so it speaks first, before
 * any bean that needs a lock registry fails for want of one; and it uses no type that differs
 * between the generations.
 */
class SpringBootGenerationCheck implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	/**
	 * The major version of Spring Boot these classes were compiled against: lock-autoconfigure and
	 * lock-autoconfigure-boot3 compile these sources each with its own {@link BootGeneration}.
	 */
	static final int BUILT_FOR_BOOT_MAJOR = BootGeneration.MAJOR;

	@Override
	public void initialize(ConfigurableApplicationContext context) {
		check(BUILT_FOR_BOOT_MAJOR, SpringBootVersion.getVersion());
	}

	/**
	 * @param builtFor the major version of Spring Boot distlock was built for
	 * @param running the version of Spring Boot the application runs; {@code null} (unknown) passes
	 * @throws WrongSpringBootGenerationException if its major version is another
	 */
	static void check(int builtFor, String running) {
		Integer major = major(running);
		if (major != null && major != builtFor) {
			throw new WrongSpringBootGenerationException(builtFor, running, major);
		}
	}

	private static Integer major(String version) {
		if (version == null) {
			return null;
		}
		int end = 0;
		while (end < version.length() && Character.isDigit(version.charAt(end))) {
			end++;
		}
		return (end == 0) ? null : Integer.valueOf(version.substring(0, end));
	}

}
