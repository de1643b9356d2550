package io.distlock.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while holding a distributed lock.
 *
 * <pre>{@code
 * @DistributedLock(key = "'order:' + #order.id", waitTime = "2s")
 * public void ship(Order order) { ... }
 * }</pre>
 *
 * <p>Works on public methods of Spring beans, on interfaces and classes (every public method), and
 * as a meta-annotation. Like {@code @Transactional} it works through a proxy, so it never applies to
 * a private, static or final method (the proxy cannot intercept or override it): start-up logs one
 * warning for each such method, naming it, and goes on. Nor does it apply to a call from one method
 * of a bean to another method of the same bean ({@code this.other()}): that call does not pass the
 * proxy, and cannot be detected; call the other method through the bean (another bean, or the proxy
 * injected into itself) instead.
 * The lock is taken before, and released after, any {@code @Transactional} boundary of the same
 * method; inside an already running transaction the release waits for its completion.
 */
@Target({ ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface DistributedLock {

	/**
	 * SpEL expressions for the lock keys, evaluated against the call: arguments by name
	 * ({@code #order}) or position ({@code #p0}, {@code #a0}), {@code #root.method},
	 * {@code #root.target}, {@code #root.args}, and beans ({@code @pricing}). A quoted string is a
	 * constant key. With several keys, all are acquired (in a fixed global order, so opposite
	 * argument orders cannot deadlock) or none. Empty: one lock for the method.
	 * <p>A key must have the same text for equal values on every instance. Strings, numbers, enums,
	 * records and other classes with their own {@code toString()} do. A value whose class keeps
	 * {@code Object.toString()} ({@code Order@58a3d521}, a different lock on every call) is
	 * rejected, on its own or concatenated ({@code 'order:' + #order}), with an
	 * {@link IllegalArgumentException} naming the method and the key, and the method is not run: lock
	 * on a property instead ({@code #order.id}, or {@code #orders.![id]} for a collection). Arrays,
	 * collections and maps are locked by their elements, each by the same rules: {@code #ids} with
	 * {@code String[] {"a", "b"}} or {@code List.of("a", "b")} is the lock {@code [a, b]}
	 * ({@code 'batch:' + #ids} is {@code batch:a,b}, as Spring's conversion renders it).
	 * @return the key expressions
	 */
	String[] key() default {};

	/**
	 * The logical name of the lock, prefixed to every key ({@code name + ":" + key}) and used in
	 * logs and metrics. Empty: keys are used as they are; with no key either, the name is
	 * {@code SimpleClassName.method}.
	 * @return the name
	 */
	String name() default "";

	/**
	 * How long to wait for the lock: {@code "500ms"}, {@code "2s"}, {@code "1m"}, ISO-8601
	 * ({@code "PT2S"}) or a placeholder ({@code "${orders.lock-wait}"}). Empty: the
	 * {@code distlock.wait-time} property.
	 * @return the wait time text
	 */
	String waitTime() default "";

	/**
	 * How long the lock is held at most, in the same forms as {@link #waitTime()}. Empty: the
	 * {@code distlock.lease-time} property, or if that is unset the watchdog keeps the lock until the
	 * method returns.
	 * @return the lease time text
	 */
	String leaseTime() default "";

	/**
	 * How long the lock stays taken at least, counted from when it was acquired, in the same forms as
	 * {@link #waitTime()}: when the method returns (or throws) sooner, its locks are not freed but
	 * left to expire once that much time has passed since they were taken, unrenewed, even if this
	 * instance stops meanwhile (ShedLock's {@code lockAtLeastFor}). For {@code @Scheduled} jobs that
	 * must run once per tick across a cluster, with {@code waitTime = "0s"} and
	 * {@code onFailure = SKIP}: an instance whose scheduler fires a little later finds the lock still
	 * taken. Keep it below the period (the same thread may take its kept lock up again). Needs a
	 * backend whose holds expire (Redis, Cluster, Redlock, the table lock; not ZooKeeper). Empty:
	 * released when the method ends.
	 * @return the minimum hold time text
	 */
	String holdAtLeast() default "";

	/**
	 * The name of the {@link io.distlock.LockRegistry} bean to lock with, for the few methods that
	 * need another backend than the application's default one (e.g. Redlock or the table lock where
	 * a lock must survive a Redis failover). Declare such a registry as
	 * {@code @Bean(defaultCandidate = false)} so that it neither replaces the auto-configured default
	 * nor is injected where a plain {@code LockRegistry} is asked for. A name that is not a
	 * {@code LockRegistry} bean stops start-up, naming the method. Empty: the default registry.
	 * @return the registry bean name, or empty
	 */
	String registry() default "";

	/**
	 * Which lock of each key to take: its exclusive lock (the default), or the read or write side of
	 * its read-write lock. Read and write need a registry that {@linkplain
	 * io.distlock.LockRegistry#offersReadWriteLocks() offers read-write locks}; one that does not stops
	 * start-up, naming the method.
	 * @return the mode
	 */
	LockMode mode() default LockMode.EXCLUSIVE;

	/**
	 * Above 1: take one permit of each key's semaphore with this many permits
	 * ({@link io.distlock.LockRegistry#getSemaphore}), so that at most this many calls run at once
	 * across all instances. 1 (the default): the key's exclusive lock. Only with
	 * {@link LockMode#EXCLUSIVE}; needs a registry that {@linkplain
	 * io.distlock.LockRegistry#offersSemaphores() offers semaphores}.
	 * @return the permits
	 */
	int permits() default 1;

	/**
	 * What happens when the lock is not acquired in time.
	 * @return the policy
	 */
	OnLockFailure onFailure() default OnLockFailure.THROW;

	/**
	 * With {@link OnLockFailure#SKIP}: a SpEL expression (same variables as {@link #key()}) for the
	 * value to return instead of running the method. Empty: {@code null}, or zero/false for
	 * primitive return types.
	 * @return the fallback expression
	 */
	String fallback() default "";

	/**
	 * The name of a {@link LockFailureHandler} bean to call when the lock is not acquired; its
	 * result is returned instead of running the method. Takes precedence over {@link #onFailure()}.
	 * @return the bean name, or empty
	 */
	String failureHandler() default "";

}
