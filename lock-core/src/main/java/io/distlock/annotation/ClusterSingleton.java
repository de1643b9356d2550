package io.distlock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.core.annotation.AliasFor;

/**
 * Runs a job on one instance of the cluster per period: the first instance to call the method
 * takes the lock and runs it; every other instance finds the lock taken and skips the call at once.
 * The lock stays taken for {@link #holdAtLeast()} after it was acquired, even when the job ends
 * sooner, so an instance whose scheduler fires a little later still skips.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 * * * * *")
 * @ClusterSingleton(holdAtLeast = "50s")    // a bit less than the period
 * public void report() { ... }
 * }</pre>
 *
 * <p>It is {@code @DistributedLock(waitTime = "0s", onFailure = SKIP, holdAtLeast = ...)}, the
 * recipe ShedLock's {@code @SchedulerLock} users know, under one name that says what it is for. A
 * skipped call returns {@code null} (zero or false for primitives). Keep {@code holdAtLeast} below the
 * period and above the largest skew between the instances' clocks and schedulers; a job longer than
 * it keeps its lock until it ends (watchdog). It needs a registry whose holds expire by themselves
 * (Redis, Cluster, Redlock, the table lock), as {@code holdAtLeast} does.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@DistributedLock(waitTime = "0s", onFailure = OnLockFailure.SKIP)
public @interface ClusterSingleton {

	/**
	 * How long the lock stays taken after it was acquired, however soon the job ends: a duration
	 * ({@code "50s"}), a property placeholder or a SpEL expression, as {@link DistributedLock#holdAtLeast()}.
	 * @return the minimum hold
	 */
	@AliasFor(annotation = DistributedLock.class)
	String holdAtLeast();

	/**
	 * The lock's name. Empty: {@code SimpleClassName.method}, one lock per job.
	 * @return the name
	 */
	@AliasFor(annotation = DistributedLock.class)
	String name() default "";

	/**
	 * SpEL keys, as {@link DistributedLock#key()}; rarely needed for a job without arguments.
	 * @return the key expressions
	 */
	@AliasFor(annotation = DistributedLock.class)
	String[] key() default {};

	/**
	 * The lock registry bean to use, as {@link DistributedLock#registry()}. Empty: the default.
	 * @return the registry bean name, or empty
	 */
	@AliasFor(annotation = DistributedLock.class)
	String registry() default "";

}
