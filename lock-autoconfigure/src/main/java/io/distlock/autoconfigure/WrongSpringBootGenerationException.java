package io.distlock.autoconfigure;

/**
 * distlock's starter for one Spring Boot generation is on the classpath of an application of the
 * other; reported at start-up, with the starter to use instead, by
 * {@link WrongSpringBootGenerationFailureAnalyzer}.
 */
public class WrongSpringBootGenerationException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String action;

	/**
	 * @param builtFor the major version of Spring Boot distlock was built for
	 * @param running the version of Spring Boot the application runs
	 * @param runningMajor its major version
	 */
	WrongSpringBootGenerationException(int builtFor, String running, int runningMajor) {
		super("distlock's " + starter(builtFor) + " is built for Spring Boot " + builtFor
				+ "; this application runs Spring Boot " + running + ". Its auto-configuration would look for Spring Boot "
				+ builtFor + "'s classes and create no lock registry, and every locked call would fail.");
		this.action = (runningMajor == 3 || runningMajor == 4)
				? "Use " + starter(runningMajor) + " instead of " + starter(builtFor) + ", of the same version (with "
						+ autoconfigure(runningMajor) + " instead of " + autoconfigure(builtFor) + " if the application "
						+ "depends on the auto-configuration directly)."
				: "distlock supports Spring Boot 3.5 with io.distlock:lock-starter-boot3 and Spring Boot 4 with "
						+ "io.distlock:lock-starter; run the application on one of them.";
	}

	private static String starter(int bootMajor) {
		return (bootMajor == 3) ? "io.distlock:lock-starter-boot3" : "io.distlock:lock-starter";
	}

	private static String autoconfigure(int bootMajor) {
		return (bootMajor == 3) ? "io.distlock:lock-autoconfigure-boot3" : "io.distlock:lock-autoconfigure";
	}

	/** @return what to do */
	public String getAction() {
		return this.action;
	}

}
