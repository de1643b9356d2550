package io.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
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
import io.distlock.annotation.LockAcquisitionException;
import io.distlock.LockBackendException;
import io.distlock.LockOrigin;
import io.distlock.LockNotAcquiredException;
import io.distlock.LockRegistry;
import io.distlock.annotation.LockContext;
import io.distlock.annotation.LockFailure;
import io.distlock.annotation.LockFailureHandler;

/**
 * Runs a {@code @DistributedLock} method under its locks: evaluates the keys, acquires every lock
 * (all or nothing, in sorted order) within one shared wait budget, runs the method, and releases in
 * reverse order, after the surrounding transaction if one is active.
 *
 * <p>Over 300 lines because acquiring several locks all or nothing within one wait, and releasing them
 * after a transaction, is one piece of ordering logic.
 */
public final class DistributedLockInterceptor implements MethodInterceptor {

	private static final Logger log = LoggerFactory.getLogger(DistributedLockInterceptor.class);

	private static final boolean TX_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			DistributedLockInterceptor.class.getClassLoader());

	private final LockAttributeSource attributes;

	private final LockKeyEvaluator keys;

	private final ObjectProvider<LockRegistry> registry;

	private final Supplier<LockDefaults> defaults;

	private final BeanFactory beanFactory;

	private final Supplier<List<DistributedLockObserver>> observers;

	private final DeferredLocking deferred = new DeferredLocking(this);

	/**
	 * @param attributes where the methods' annotations are parsed
	 * @param registry the lock registry, looked up at the first call so the interceptor can exist
	 * before the connection beans
	 * @param defaults what the annotation leaves unsaid, asked at the first call
	 * @param beanFactory for {@code @bean} references and failure handler beans
	 */
	public DistributedLockInterceptor(LockAttributeSource attributes, ObjectProvider<LockRegistry> registry,
			Supplier<LockDefaults> defaults, BeanFactory beanFactory) {
		this(attributes, registry, defaults, beanFactory, List::of);
	}

	/**
	 * @param attributes where the methods' annotations are parsed
	 * @param registry the lock registry, looked up at the first call
	 * @param defaults what the annotation leaves unsaid, asked at the first call
	 * @param beanFactory for {@code @bean} references and failure handler beans
	 * @param observers told about acquisitions and releases (metrics), asked at the first call
	 */
	public DistributedLockInterceptor(LockAttributeSource attributes, ObjectProvider<LockRegistry> registry,
			Supplier<LockDefaults> defaults, BeanFactory beanFactory, Supplier<List<DistributedLockObserver>> observers) {
		this.attributes = attributes;
		this.keys = new LockKeyEvaluator(beanFactory);
		this.registry = registry;
		this.defaults = defaults;
		this.beanFactory = beanFactory;
		this.observers = observers;
	}

	@Override
	public Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target) : null;
		LockAttribute attribute = this.attributes.find(invocation.getMethod(), targetClass).orElse(null);
		if (attribute == null) {
			return invocation.proceed();
		}
		Method method = attribute.method();
		Object[] arguments = invocation.getArguments();
		EvaluationContext context = this.keys.context(method, target, arguments);
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
		if (attribute.deferred()) {
			return this.deferred.invoke(invocation,
					new DeferredLocking.Call(attribute, locks, names, wait, lease, context, target, arguments));
		}
		List<DistLock> held = new ArrayList<>(names.size());
		long start = System.nanoTime();
		Throwable cause;
		Map<String, LongSupplier> tokens;
		try {
			cause = LockOrigin.during(attribute.logicalName(), attribute.description(),
					() -> acquireAll(attribute, names, wait, start, held, (name, left) -> {
						DistLock lock = locks.getLock(name);
						return lock.tryLock(left, lease) ? lock : null;
					}));
			tokens = (held.size() == names.size()) ? fencingTokens(locks, held) : null;
		}
		catch (Throwable ex) {
			// Anything else (a closed registry, a hold lost meanwhile, an Error) reaches the caller as it is,
			// but the locks taken so far must not stay held, renewed by the watchdog, with no one to release them.
			releaseQuietly(held);
			Duration waited = Duration.ofNanos(System.nanoTime() - start);
			observe(observer -> observer.acquisition(attribute.logicalName(), attribute.registryName(),
					DistributedLockObserver.Outcome.FAILED, waited));
			throw ex;
		}
		Duration waited = Duration.ofNanos(System.nanoTime() - start);
		if (tokens == null) {
			releaseQuietly(held);
			observe(observer -> observer.acquisition(attribute.logicalName(), attribute.registryName(),
					(cause == null) ? DistributedLockObserver.Outcome.TIMED_OUT : DistributedLockObserver.Outcome.FAILED,
					waited));
			return onFailure(attribute, new LockFailure(names, method, target, arguments, waited, cause), context);
		}
		observe(observer -> observer.acquisition(attribute.logicalName(), attribute.registryName(),
				DistributedLockObserver.Outcome.ACQUIRED, waited));
		long acquiredAt = System.nanoTime();

		LockContext.push(tokens);
		Throwable failure = null;
		try {
			return invocation.proceed();
		}
		catch (Throwable ex) {
			failure = ex;
			throw ex;
		}
		finally {
			LockContext.pop();
			releaseAfterTransaction(held, failure, attribute, acquiredAt);
		}
	}

	/**
	 * Takes the locks in order within one wait budget, adding each to {@code held}; shared by the
	 * thread-bound holds here and the work-bound ones of {@link DeferredLocking}. Anything other than
	 * a backend failure or an interrupt propagates; the caller releases what is in {@code held}. A
	 * name the registry refuses (too long for a table's column, say) is reported naming the method,
	 * whose key produced it: the registry's own message knows only the name.
	 * @param take takes one lock within what is left of the wait; {@code null} if it stayed taken
	 * @return why it stopped short (backend failure, interrupt), or {@code null}
	 */
	static <H> Throwable acquireAll(LockAttribute attribute, List<String> names, Duration wait, long start,
			List<H> held, LockTaker<H> take) {
		try {
			for (String name : names) {
				Duration left = wait.minusNanos(System.nanoTime() - start);
				H hold;
				try {
					hold = take.take(name, left.isNegative() ? Duration.ZERO : left);
				}
				catch (IllegalArgumentException refused) {
					throw refusedName(attribute, refused);
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

	/** A registry without sound tokens (Redlock) gives none: {@link LockContext} says so when asked. */
	private static Map<String, LongSupplier> fencingTokens(LockRegistry locks, List<DistLock> held) {
		boolean offered = locks.offersFencingTokens();
		Map<String, LongSupplier> tokens = new LinkedHashMap<>();
		for (DistLock lock : held) {
			tokens.put(lock.getName(), offered ? lock::getFencingToken : null);
		}
		return tokens;
	}

	void observe(Consumer<DistributedLockObserver> event) {
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
	Object onFailure(LockAttribute attribute, LockFailure failure, EvaluationContext context) throws Throwable {
		log.debug("@DistributedLock {} did not get {} within {} ms", attribute.description(), failure.lockNames(),
				failure.waited().toMillis());
		if (!attribute.failureHandler().isEmpty()) {
			return this.beanFactory.getBean(attribute.failureHandler(), LockFailureHandler.class).handle(failure);
		}
		return switch (attribute.onFailure()) {
			case THROW -> throw new LockAcquisitionException(failure.lockNames(), failure.method(), failure.waited(),
					(failure.cause() != null) ? failure.cause() : refusalOf(attribute, failure));
			case SKIP -> skipValue(attribute, context);
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
	private LockNotAcquiredException refusalOf(LockAttribute attribute, LockFailure failure) {
		LockRegistry locks = registryOf(attribute);
		if (locks == null) {
			return null;
		}
		return locks.restartGraceEnds()
			.map(ends -> locks.notAcquired(failure.lockNames().get(0), failure.waited()))
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
	private void releaseAfterTransaction(List<DistLock> held, Throwable failure, LockAttribute attribute, long acquiredAt) {
		if (TX_PRESENT && TransactionSynchronizationManager.isSynchronizationActive()) {
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
				@Override
				public void afterCompletion(int status) {
					try {
						release(held, null, attribute, acquiredAt);
					}
					catch (RuntimeException ex) {
						log.warn("Could not release the locks of {} after its transaction: {}", attribute.description(),
								ex.toString());
					}
					observeRelease(attribute, acquiredAt);
				}
			});
			return;
		}
		try {
			release(held, failure, attribute, acquiredAt);
		}
		finally {
			observeRelease(attribute, acquiredAt);
		}
	}

	void observeRelease(LockAttribute attribute, long acquiredAt) {
		Duration heldFor = Duration.ofNanos(System.nanoTime() - acquiredAt);
		observe(observer -> observer.released(attribute.logicalName(), attribute.registryName(), heldFor));
	}

	/**
	 * Releases in reverse order, each lock kept until {@code holdAtLeast} has passed if the method
	 * sets one. A lost hold is reported to the caller (the method's exclusivity is in doubt), added to
	 * the method's own exception if it threw.
	 */
	private static void release(List<DistLock> held, Throwable failure, LockAttribute attribute, long acquiredAt) {
		RuntimeException releaseFailure = null;
		for (int i = held.size() - 1; i >= 0; i--) {
			try {
				Duration keep = attribute.keepAfter(acquiredAt);
				if (keep.isNegative() || keep.isZero()) {
					held.get(i).unlock();
				}
				else {
					held.get(i).unlockKeepingFor(keep);
				}
			}
			catch (RuntimeException ex) {
				if (releaseFailure == null) {
					releaseFailure = ex;
				}
				else {
					releaseFailure.addSuppressed(ex);
				}
			}
		}
		if (releaseFailure != null) {
			if (failure != null) {
				failure.addSuppressed(releaseFailure);
			}
			else {
				throw releaseFailure;
			}
		}
	}

	private static void releaseQuietly(List<DistLock> held) {
		for (int i = held.size() - 1; i >= 0; i--) {
			try {
				held.get(i).unlock();
			}
			catch (RuntimeException ex) {
				log.warn("Could not release lock '{}': {}", held.get(i).getName(), ex.toString());
			}
		}
	}

}
