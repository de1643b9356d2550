package io.distlock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.expression.EvaluationContext;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.LockNotAcquiredException;
import io.distlock.LockOrigin;
import io.distlock.LockRegistry;
import io.distlock.WorkHold;
import io.distlock.annotation.LockAcquisitionException;
import io.distlock.annotation.LockContext;
import io.distlock.annotation.LockFailure;
import io.distlock.annotation.LockFailureHandler;
import io.distlock.annotation.LockMode;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * What the {@code @DistributedLock} aspect does for every kind of method, in the role Spring's
 * {@code TransactionAspectSupport} plays for transactions: a call prepared from its annotation (keys,
 * registry, wait and lease), every lock taken within one wait, all or none, in sorted order, the
 * observers told, a failure answered by the method's policy, and the holds released in reverse order,
 * each kept for {@code holdAtLeast}, after the surrounding transaction if one is active. Every call is
 * observed ({@link LockObservation}): its wait, then its hold, children of the caller's observation.
 *
 * <p>The blocking path runs here; the deferred paths run futures and Reactor types over the
 * same steps (all but the transaction), with holds that belong to the work instead of the thread.
 */
final class LockAspectSupport {

	private static final Logger log = LoggerFactory.getLogger(LockAspectSupport.class);

	private static final boolean TX_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			LockAspectSupport.class.getClassLoader());

	private final LockAttributeSource attributes;

	private final LockKeyEvaluator keys;

	private final ObjectProvider<LockRegistry> registry;

	private final Supplier<LockDefaults> defaults;

	private final BeanFactory beanFactory;

	private final Supplier<List<DistributedLockObserver>> observers;

	private final Supplier<ObservationRegistry> observations;

	private final SkipWarnings skipWarnings = new SkipWarnings();

	LockAspectSupport(LockAttributeSource attributes, ObjectProvider<LockRegistry> registry,
			Supplier<LockDefaults> defaults, BeanFactory beanFactory, Supplier<List<DistributedLockObserver>> observers,
			Supplier<ObservationRegistry> observations) {
		this.attributes = attributes;
		this.keys = new LockKeyEvaluator(beanFactory);
		this.registry = registry;
		this.defaults = defaults;
		this.beanFactory = beanFactory;
		this.observers = observers;
		this.observations = observations;
	}

	/**
	 * @return the call with its lock names, registry, wait and lease; {@code null} if the method is not locked
	 * @throws IllegalArgumentException if a key does not evaluate to a usable name
	 * @throws IllegalStateException if there is no registry, or it cannot do what the annotation asks
	 */
	LockedCall prepare(MethodInvocation invocation) {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		LockAttribute attribute = this.attributes.find(invocation.getMethod(), targetClass).orElse(null);
		if (attribute == null) {
			return null;
		}
		Object[] arguments = invocation.getArguments();
		EvaluationContext context = this.keys.context(attribute.method(), target, arguments);
		List<String> names = this.keys.lockNames(attribute, context);
		LockDefaults defaults = this.defaults.get();
		Duration wait = (attribute.waitTime() != null) ? attribute.waitTime() : defaults.waitTime();
		Duration lease = (attribute.leaseTime() != null) ? attribute.leaseTime() : defaults.leaseTime();
		LockRegistry locks = registryOf(attribute);
		if (locks == null) {
			throw new IllegalStateException("@DistributedLock " + attribute.description()
					+ " needs a LockRegistry bean and there is none; the method was not run. Choose one of the "
					+ "application's registries with @DistributedLock(registry = \"<bean name>\"), or give the "
					+ "application a default one: a LockRegistry bean, or distlock's auto-configuration "
					+ "(distlock.backend and its backend's settings).");
		}
		if (attribute.holdAtLeast() != null && !locks.canKeepAfterUnlock()) {
			throw new IllegalStateException("@DistributedLock " + attribute.description() + " sets holdAtLeast, but "
					+ locks.getClass().getSimpleName() + " cannot keep a lock after its release (its holds do not "
					+ "expire on their own, as ZooKeeper's last as long as the session); the method was not run. "
					+ "Use a Redis, Redlock or table-lock registry, or drop holdAtLeast.");
		}
		String unsupported = attribute.unsupportedBy(locks);
		if (unsupported != null) {
			// Also checked at start-up; here for registries made later, or beans proxied lazily.
			throw new IllegalStateException("@DistributedLock " + attribute.description() + ": " + unsupported
					+ "; the method was not run.");
		}
		return new LockedCall(attribute, locks, names, wait, lease, context, target, arguments);
	}

	/**
	 * Checks, once every singleton exists, that each parsed method's registry offers the locks its
	 * annotation takes (read-write locks, semaphores): a method that could never lock should stop
	 * start-up, not fail its first call in production. Registries not there yet are checked at the call.
	 * @throws InvalidLockAnnotationException naming the first method whose registry cannot take its locks
	 */
	void checkLockKinds() {
		for (LockAttribute attribute : this.attributes.parsed()) {
			if (attribute.mode() == LockMode.EXCLUSIVE && !attribute.semaphore()) {
				continue;
			}
			LockRegistry locks = registryOf(attribute);
			String unsupported = (locks != null) ? attribute.unsupportedBy(locks) : null;
			if (unsupported != null) {
				throw new InvalidLockAnnotationException("@DistributedLock on " + attribute.description() + ": "
						+ unsupported + ". Lock it with such a registry (registry = \"<bean name>\"), or take the "
						+ "exclusive lock (drop mode and permits)", null);
			}
		}
	}

	/** Runs a method whose work ends when it returns, holding its locks on the calling thread. */
	Object invokeLocked(MethodInvocation invocation, LockedCall call) throws Throwable {
		List<DistLock> held = new ArrayList<>(call.names().size());
		LockObservation observation = startObservation(call, currentObservation());
		long start = System.nanoTime();
		Throwable cause;
		Map<String, LongSupplier> tokens;
		try {
			cause = LockOrigin.during(call.attribute().logicalName(), call.attribute().description(),
					() -> acquireAll(call, start, held, (name, left) -> {
						DistLock lock = call.lock(name);
						return lock.tryLock(left, call.leaseTime()) ? lock : null;
					}));
			tokens = (held.size() == call.names().size()) ? fencingTokens(call.locks(), held) : null;
		}
		catch (Throwable ex) {
			// Anything else (a closed registry, a hold lost meanwhile, an Error) reaches the caller as it is,
			// but the locks taken so far must not stay held, renewed by the watchdog, with no one to release them.
			Duration waited = waitedSince(start);
			releaseQuietly(held, UNLOCK, DistLock::getName, null, 0, call.attribute().description());
			observeAcquisition(call, observation, DistributedLockObserver.Outcome.FAILED, waited, ex);
			throw ex;
		}
		Duration waited = waitedSince(start);
		if (tokens == null) {
			releaseQuietly(held, UNLOCK, DistLock::getName, null, 0, call.attribute().description());
			observeAcquisition(call, observation, (cause == null) ? DistributedLockObserver.Outcome.TIMED_OUT
					: DistributedLockObserver.Outcome.FAILED, waited, cause);
			return onFailure(call, failure(call, waited, cause));
		}
		observeAcquisition(call, observation, DistributedLockObserver.Outcome.ACQUIRED, waited, null);
		long acquiredAt = System.nanoTime();

		LockContext.push(tokens);
		Throwable failure = null;
		try (LockObservation.HoldScope scope = observation.openHoldScope()) {
			return invocation.proceed();
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			LockContext.pop();
			releaseAfterTransaction(held, failure, call.attribute(), acquiredAt, observation);
		}
	}

	/**
	 * Takes the call's locks in order within one wait budget, adding each to {@code held}; for the
	 * thread-bound holds of {@link #invokeLocked} and the work-bound ones of the deferred paths.
	 * Anything other than a backend failure or an interrupt propagates; the caller releases what is
	 * in {@code held}. A name the registry refuses (too long for a table's column, say) is reported
	 * naming the method, whose key produced it: the registry's own message knows only the name.
	 * @param take takes one lock within what is left of the wait; {@code null} if it stayed taken
	 * @return why it stopped short (backend failure, interrupt), or {@code null}
	 */
	static <H> Throwable acquireAll(LockedCall call, long start, List<H> held, LockTaker<H> take) {
		try {
			for (String name : call.names()) {
				Duration left = call.waitTime().minusNanos(System.nanoTime() - start);
				H hold;
				try {
					hold = take.take(name, left.isNegative() ? Duration.ZERO : left);
				}
				catch (IllegalArgumentException refused) {
					throw refusedName(call.attribute(), refused);
				}
				if (hold == null) {
					return null;
				}
				held.add(hold);
			}
			return null;
		}
		catch (LockBackendException ex) {
			return ex;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return ex;
		}
	}

	/** @return the registry's refusal of a lock name, naming the method whose key produced it */
	static IllegalArgumentException refusedName(LockAttribute attribute, IllegalArgumentException refused) {
		return new IllegalArgumentException("@DistributedLock " + attribute.description()
				+ ": the lock registry refused the lock name its key produced, and the method was not run: "
				+ refused.getMessage(), refused);
	}

	/** Takes one lock, for a thread or for a piece of work. */
	@FunctionalInterface
	interface LockTaker<H> {

		/** @return the hold, or {@code null} if another holder kept the lock for the whole wait */
		H take(String name, Duration wait) throws InterruptedException;

	}

	/** @return how long the call has waited for its locks: measured once, before any release, for every report */
	static Duration waitedSince(long start) {
		return Duration.ofNanos(System.nanoTime() - start);
	}

	/** @return what the method's policy is told: the locks it did not get, how long it waited, and why */
	static LockFailure failure(LockedCall call, Duration waited, Throwable cause) {
		return new LockFailure(call.names(), call.attribute().method(), call.target(), call.arguments(), waited, cause);
	}

	/** A registry without sound tokens (Redlock) gives none: {@link LockContext} says so when asked. */
	private static Map<String, LongSupplier> fencingTokens(LockRegistry locks, List<DistLock> held) {
		boolean offered = locks.offersFencingTokens();
		Map<String, LongSupplier> tokens = new LinkedHashMap<>();
		for (DistLock lock : held) {
			tokens.put(lock.getName(), offered ? lock::getFencingToken : null);
		}
		return tokens;
	}

	/** @return the caller's observation, the parent of the call's own: read on the calling thread */
	Observation currentObservation() {
		return this.observations.get().getCurrentObservation();
	}

	/** Starts the call's {@code distlock.acquire}, before its first lock is asked for. */
	LockObservation startObservation(LockedCall call, Observation parent) {
		return LockObservation.start(this.observations.get(), call, parent);
	}

	/**
	 * Tells the observers, and the call's observation, how its acquisition ended.
	 * @param error the backend failure, interrupt or other exception that ended it, or {@code null}
	 */
	void observeAcquisition(LockedCall call, LockObservation observation, DistributedLockObserver.Outcome outcome,
			Duration waited, Throwable error) {
		observe(observer -> observer.acquisition(call.attribute().logicalName(), call.attribute().registryName(),
				outcome, waited));
		observation.acquisitionEnded(outcome, error);
	}

	/**
	 * Tells the observers, and the call's observation, that its locks were released.
	 * @param error the method's exception or the work's error, or a lost hold; or {@code null}
	 */
	void observeRelease(LockAttribute attribute, long acquiredAt, LockObservation observation, Throwable error) {
		Duration heldFor = Duration.ofNanos(System.nanoTime() - acquiredAt);
		observe(observer -> observer.released(attribute.logicalName(), attribute.registryName(), heldFor));
		observation.released(error);
	}

	private void observe(Consumer<DistributedLockObserver> event) {
		for (DistributedLockObserver observer : this.observers.get()) {
			try {
				event.accept(observer);
			}
			catch (RuntimeException ex) {
				log.warn("DistributedLockObserver {} failed", observer, ex);
			}
		}
	}

	/**
	 * @return what the method returns when its locks were not acquired: the failure handler's or
	 * the fallback's value, or the {@link LockAcquisitionException} thrown for {@code THROW}
	 */
	Object onFailure(LockedCall call, LockFailure failure) throws Throwable {
		LockAttribute attribute = call.attribute();
		log.debug("@DistributedLock {} did not get {} within {} ms", attribute.description(), failure.lockNames(),
				failure.waited().toMillis());
		if (!attribute.failureHandler().isEmpty()) {
			return this.beanFactory.getBean(attribute.failureHandler(), LockFailureHandler.class).handle(failure);
		}
		Throwable why = (failure.cause() != null) ? failure.cause() : refusalOf(call.locks(), failure);
		return switch (attribute.onFailure()) {
			case THROW -> throw new LockAcquisitionException(failure.lockNames(), failure.method(), failure.waited(), why);
			case SKIP -> {
				if (why != null && !(why instanceof InterruptedException)) {
					this.skipWarnings.skipped(attribute, why);
				}
				yield skipValue(attribute, call.context());
			}
		};
	}

	/** @return the registry the method's locks come from, or {@code null} if there is none */
	private LockRegistry registryOf(LockAttribute attribute) {
		return attribute.registry().isEmpty() ? this.registry.getIfAvailable()
				: this.beanFactory.getBean(attribute.registry(), LockRegistry.class);
	}

	/**
	 * @return why the locks stayed taken when the registry knows better than "another holder kept
	 * it" (its backend serves its restart grace), else {@code null}
	 */
	private static LockNotAcquiredException refusalOf(LockRegistry locks, LockFailure failure) {
		return locks.restartGraceEnds()
			.map(ends -> new LockNotAcquiredException(failure.lockNames().get(0), failure.waited(), ends))
			.orElse(null);
	}

	private static Object skipValue(LockAttribute attribute, EvaluationContext context) {
		Class<?> returnType = attribute.method().getReturnType();
		if (attribute.deferred()) {
			// The fallback is the value the future or stream carries; it is wrapped afterwards.
			return (attribute.fallback() != null) ? attribute.fallback().getValue(context) : null;
		}
		if (attribute.fallback() != null) {
			return attribute.fallback().getValue(context, ClassUtils.resolvePrimitiveIfNecessary(returnType));
		}
		if (returnType == boolean.class) {
			return false;
		}
		if (returnType == char.class) {
			return '\0';
		}
		if (returnType.isPrimitive() && returnType != void.class) {
			return DefaultConversionService.getSharedInstance()
				.convert(0, ClassUtils.resolvePrimitiveIfNecessary(returnType));
		}
		return null;
	}

	/**
	 * Inside a running transaction the locks must outlive it: the next holder must see its commit.
	 */
	private void releaseAfterTransaction(List<DistLock> held, Throwable failure, LockAttribute attribute,
			long acquiredAt, LockObservation observation) {
		if (TX_PRESENT && TransactionSynchronizationManager.isSynchronizationActive()) {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
				@Override
				public void afterCompletion(int status) {
					try {
						releaseQuietly(held, UNLOCK, DistLock::getName, attribute, acquiredAt,
								attribute.description() + " after its transaction");
					}
					finally {
						observeRelease(attribute, acquiredAt, observation, failure);
					}
				}
			});
			return;
		}
		RuntimeException releaseFailure = null;
		try {
			// A lost hold is reported to the caller (the method's exclusivity is in doubt), added to the
			// method's own exception if it threw.
			releaseFailure = releaseAll(held, UNLOCK, attribute, acquiredAt);
			if (releaseFailure != null && failure == null) {
				throw releaseFailure;
			}
			if (releaseFailure != null && releaseFailure != failure) {
				failure.addSuppressed(releaseFailure);
			}
		}
		finally {
			observeRelease(attribute, acquiredAt, observation, (failure != null) ? failure : releaseFailure);
		}
	}

	/** Ends one hold, keeping the lock for {@code keep} after it if that is positive. */
	@FunctionalInterface
	interface HoldRelease<H> {

		void release(H hold, Duration keep);

	}

	static final HoldRelease<DistLock> UNLOCK = (lock, keep) -> {
		if (keep.isNegative() || keep.isZero()) {
			lock.unlock();
		}
		else {
			lock.unlockKeepingFor(keep);
		}
	};

	static final HoldRelease<WorkHold> RELEASE_WORK = (hold, keep) -> {
		if (keep.isNegative() || keep.isZero()) {
			hold.release();
		}
		else {
			hold.releaseKeepingFor(keep);
		}
	};

	/**
	 * The one release loop of every path: in reverse order of acquisition, each hold kept until the
	 * attribute's {@code holdAtLeast} has passed if it has one, every hold tried whatever the others did.
	 * @param attribute the method's attribute, or {@code null} to release at once (holds given back unused)
	 * @return the first failure, the later ones suppressed in it, or {@code null}
	 */
	static <H> RuntimeException releaseAll(List<H> held, HoldRelease<H> release, LockAttribute attribute,
			long acquiredAt) {
		return releaseAll(held, release, attribute, acquiredAt, null);
	}

	private static <H> RuntimeException releaseAll(List<H> held, HoldRelease<H> release, LockAttribute attribute,
			long acquiredAt, List<H> failed) {
		RuntimeException first = null;
		for (int i = held.size() - 1; i >= 0; i--) {
			try {
				release.release(held.get(i), (attribute != null) ? attribute.keepAfter(acquiredAt) : Duration.ZERO);
			}
			catch (RuntimeException ex) {
				if (failed != null) {
					failed.add(held.get(i));
				}
				if (first == null) {
					first = ex;
				}
				else if (ex != first) {
					// One exception object may fail several holds (a registry's "closed"): not suppressed in itself.
					first.addSuppressed(ex);
				}
			}
		}
		return first;
	}

	/**
	 * Releases as {@link #releaseAll}, where nobody is left to throw to (the work has ended, or the
	 * call already fails for another reason): a failure is logged, with the locks and the method.
	 */
	static <H> void releaseQuietly(List<H> held, HoldRelease<H> release, Function<H, String> name,
			LockAttribute attribute, long acquiredAt, String description) {
		List<H> failed = new ArrayList<>(0);
		RuntimeException failure = releaseAll(held, release, attribute, acquiredAt, failed);
		if (failure != null) {
			log.warn("Could not release {} of {}: {}", failed.stream().map(name).map(lock -> "'" + lock + "'").toList(),
					description, failure.toString());
		}
	}

}
