package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;

/**
 * Hostile {@code distlock.*} values through Spring Boot's binding, with the table lock on H2 so no
 * server is needed: the application either starts and its locks work with what was bound, or fails
 * to start with a message that names the property.
 */
class DistLockPropertyValuesProperties {

	private static final AtomicInteger databases = new AtomicInteger();

	private static final List<String> DURATIONS = List.of("distlock.wait-time", "distlock.lease-time",
			"distlock.watchdog.timeout", "distlock.restart-grace");

	@Property(tries = 15)
	void aDurationStartsWorkingLocksOrFailsNamingTheProperty(@ForAll("durationProperties") String property,
			@ForAll("durations") String value) {
		runner().withPropertyValues(property + "=" + value).run(context -> {
			if (context.getStartupFailure() != null) {
				assertThat(messages(context.getStartupFailure())).as("why %s=%s was refused", property, value)
					.contains(property);
				return;
			}
			DistLockProperties bound = context.getBean(DistLockProperties.class);
			assertThat(bound.getWaitTime()).isGreaterThanOrEqualTo(Duration.ZERO);
			assertThat(bound.getWatchdog().getTimeout()).isGreaterThanOrEqualTo(Duration.ofMillis(30));
			DistLock lock = context.getBean(LockRegistry.class).getLock("p");
			// A lease from the properties, as the annotation takes it, and one kept by the watchdog.
			Duration lease = (bound.getLeaseTime() != null) ? bound.getLeaseTime() : bound.getWatchdog().getTimeout();
			lockAndUnlock(lock, () -> lock.tryLock(Duration.ofSeconds(2), lease), lease);
			lockAndUnlock(lock, () -> lock.tryLock(Duration.ofSeconds(2)), bound.getWatchdog().getTimeout());
		});
	}

	@Property(tries = 40)
	void aKeyPrefixIsUsedAsItIsOrRefusedNamingTheProperty(@ForAll("prefixes") String prefix) {
		// Binding and its validation only: a context with a database costs a second on a busy machine.
		new ApplicationContextRunner().withUserConfiguration(PropertiesOnly.class)
			.withPropertyValues("distlock.key-prefix=" + prefix)
			.run(context -> {
				if (context.getStartupFailure() != null) {
					assertThat(messages(context.getStartupFailure())).as("why prefix '%s' was refused", prefix)
						.contains("distlock.key-prefix");
					return;
				}
				String bound = context.getBean(DistLockProperties.class).getKeyPrefix();
				assertThat(bound).isNotBlank().doesNotContain("{", "}");
			});
	}

	@Provide
	Arbitrary<String> durationProperties() {
		return Arbitraries.of(DURATIONS);
	}

	/** Numbers with and without units (small, zero, negative, huge), ISO-8601, and garbage. */
	@Provide
	Arbitrary<String> durations() {
		Arbitrary<String> number = Arbitraries.oneOf(Arbitraries.longs().between(-5, 100).map(String::valueOf),
				Arbitraries.longs().map(String::valueOf), Arbitraries.of("0", "-0", "1.5", "9999999999999999999", "1e3"));
		Arbitrary<String> unit = Arbitraries.of("", "ns", "us", "ms", "s", "m", "h", "d", "x", " s");
		Arbitrary<String> simple = Combinators.combine(number, unit).as(String::concat);
		Arbitrary<String> iso = Arbitraries.of("PT0S", "PT-1S", "PT30S", "P1D", "PT2562047788015215H", "P106751991167300D",
				"PT", "P", "PT1.5S");
		Arbitrary<String> garbage = Arbitraries.of("", " ", "abc", "1 s", "s", "--1s", "1s2s", "\t3s", "3s\n", "∞");
		return Arbitraries.oneOf(simple, iso, garbage);
	}

	@Provide
	Arbitrary<String> prefixes() {
		return Arbitraries.oneOf(Arbitraries.of("", " ", "\t", "{", "}", "a{b}", "{app}", "app", "app:locks"),
				Arbitraries.strings().withChars("ab:{} \t-_").ofMaxLength(8));
	}

	private static ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(
					MovedBootTypes.DATA_SOURCE_AUTO_CONFIGURATION,
					DistLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:values-" + databases.incrementAndGet()
					+ ";DB_CLOSE_DELAY=-1", "distlock.backend=jdbc", "distlock.jdbc.create-schema=true");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(DistLockProperties.class)
	static class PropertiesOnly {

	}

	/**
	 * Locks and unlocks. A lease of a few milliseconds, which the properties allow, may run out on a
	 * busy machine before the backend's answer arrives or before the unlock: the acquisition then
	 * fails saying to use a longer lease, or the unlock says the hold was lost. A lease of a second
	 * or more must simply work.
	 */
	private static void lockAndUnlock(DistLock lock, Callable<Boolean> acquire, Duration lease) throws Exception {
		boolean shortLease = lease.compareTo(Duration.ofSeconds(1)) < 0;
		try {
			assertThat(acquire.call()).as("lock with lease %s", lease).isTrue();
		}
		catch (LockBackendException ex) {
			assertThat(shortLease).as("a lease of %s failed the acquisition: %s", lease, ex.getMessage()).isTrue();
			assertThat(ex).hasMessageContaining("Use a longer lease");
			return;
		}
		try {
			lock.unlock();
		}
		catch (LockLostException ex) {
			assertThat(shortLease).as("a lease of %s was lost before unlock: %s", lease, ex.getMessage()).isTrue();
			assertThat(ex).hasMessageContaining("'p'");
		}
	}

	private static String messages(Throwable failure) {
		List<String> messages = new ArrayList<>();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			messages.add(String.valueOf(cause.getMessage()));
		}
		return String.join(" <- ", messages);
	}

}
