package io.distlock.aop;

import java.util.List;
import java.util.function.Supplier;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

import io.distlock.LockRegistry;
import io.micrometer.observation.ObservationRegistry;

/**
 * Runs a {@code @DistributedLock} method under its locks: evaluates the keys, acquires every lock
 * (all or nothing, in sorted order) within one shared wait budget, runs the method, and releases in
 * reverse order, after the surrounding transaction if one is active. A method whose work ends after
 * it returns (a {@code CompletionStage}, a Reactor {@code Mono} or {@code Flux}) keeps its locks
 * until that work ends. With an {@link ObservationRegistry}, each call's wait for its locks and its hold
 * of them are Micrometer observations ({@link DistLockObservationDocumentation}).
 *
 * <p>A dispatcher, as Spring's {@code TransactionInterceptor} is: what locking a call means lives in
 * {@link LockAspectSupport}, which every kind of method shares.
 */
public final class DistributedLockInterceptor implements MethodInterceptor, SmartInitializingSingleton {

	private final LockAspectSupport support;

	private final DeferredLocking deferred;

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
		this(attributes, registry, defaults, beanFactory, observers, () -> ObservationRegistry.NOOP);
	}

	/**
	 * @param attributes where the methods' annotations are parsed
	 * @param registry the lock registry, looked up at the first call
	 * @param defaults what the annotation leaves unsaid, asked at the first call
	 * @param beanFactory for {@code @bean} references and failure handler beans
	 * @param observers told about acquisitions and releases (metrics), asked at the first call
	 * @param observations where each call's {@code distlock.acquire} and {@code distlock.hold} are
	 * observed, asked at every call (so it can be a lazy lookup); {@link ObservationRegistry#NOOP} for none
	 */
	public DistributedLockInterceptor(LockAttributeSource attributes, ObjectProvider<LockRegistry> registry,
			Supplier<LockDefaults> defaults, BeanFactory beanFactory, Supplier<List<DistributedLockObserver>> observers,
			Supplier<ObservationRegistry> observations) {
		this.support = new LockAspectSupport(attributes, registry, defaults, beanFactory, observers, observations);
		this.deferred = new DeferredLocking(this.support);
	}

	/**
	 * Once every singleton exists: a method whose registry cannot take the locks its annotation asks
	 * for (a read-write lock, a semaphore) stops start-up, naming the method.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.support.checkLockKinds();
	}

	@Override
	public Object invoke(MethodInvocation invocation) throws Throwable {
		LockedCall call = this.support.prepare(invocation);
		if (call == null) {
			return invocation.proceed();
		}
		if (call.attribute().deferred()) {
			return this.deferred.invoke(invocation, call);
		}
		return this.support.invokeLocked(invocation, call);
	}

}
