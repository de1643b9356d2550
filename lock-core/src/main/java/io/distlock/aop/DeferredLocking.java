package io.distlock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.aopalliance.intercept.MethodInvocation;
import org.springframework.util.ClassUtils;

import io.distlock.LockOrigin;
import io.distlock.WorkHold;
import io.distlock.annotation.LockContext;
import io.distlock.annotation.LockFailure;

/**
 * Locks methods whose work ends after they return, as Spring's transaction interceptor adapts to
 * the return type: a {@link CompletionStage} keeps its locks until the work's stage completes (the
 * caller gets a future that follows it, which it may cancel or time out without ending the hold); a
 * Reactor {@code Mono} or {@code Flux} takes them when it is subscribed to and keeps them until it
 * completes, fails or is cancelled. The holds belong to the work ({@link WorkHold}), so whichever
 * thread ends it releases them.
 *
 * <p>A future-returning method waits for its locks on the calling thread, as a synchronous one
 * does; a Mono or Flux waits without any thread ({@link DeferredAcquisition}), never blocking the
 * subscribing (event-loop) thread.
 */
final class DeferredLocking {

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			DeferredLocking.class.getClassLoader());

	/**
	 * Where holds are released when their work ends: off the completing thread (an event loop, a
	 * cancelling caller), and apart from the threads that wait for locks, so that releases never
	 * queue behind the waits they would end. Releases are bounded by the hold's lease.
	 */
	static final ExecutorService RELEASES = Executors.newCachedThreadPool(daemon("distlock-release-"));

	private final LockAspectSupport support;

	DeferredLocking(LockAspectSupport support) {
		this.support = support;
	}

	/**
	 * @param returnType a locked method's return type
	 * @return whether its locks are held until its work ends rather than until it returns
	 */
	static boolean handles(Class<?> returnType) {
		return CompletionStage.class.isAssignableFrom(returnType)
				|| (REACTOR_PRESENT && ReactorLocking.handles(returnType));
	}

	/** All of a call's holds, or why it has none; released once, however many ways the work ends. */
	record Acquired(List<WorkHold> holds, LockFailure failure, long acquiredAt, AtomicBoolean released,
			AtomicInteger phase) {

		private static final int TAKEN = 0;

		private static final int IN_USE = 1;

		private static final int GIVEN_BACK = 2;

		Acquired(List<WorkHold> holds, LockFailure failure, long acquiredAt) {
			this(holds, failure, acquiredAt, new AtomicBoolean(), new AtomicInteger(TAKEN));
		}

		/** @return whether the work may run under these holds: they were not given back first */
		boolean claim() {
			return this.phase.compareAndSet(TAKEN, IN_USE);
		}

		/** @return whether the holds may be given back unused: no work claimed them first */
		boolean giveBack() {
			return this.phase.compareAndSet(TAKEN, GIVEN_BACK);
		}

		/** @param offered whether the registry offers fencing tokens (Redlock's holds have none) */
		Map<String, LongSupplier> tokens(boolean offered) {
			Map<String, LongSupplier> tokens = new LinkedHashMap<>();
			for (WorkHold hold : this.holds) {
				tokens.put(hold.lockName(), offered ? hold::fencingToken : null);
			}
			return tokens;
		}

	}

	Object invoke(MethodInvocation invocation, LockedCall call) throws Throwable {
		if (CompletionStage.class.isAssignableFrom(call.attribute().method().getReturnType())) {
			return invokeForStage(invocation, call);
		}
		return ReactorLocking.invoke(this, invocation, call);
	}

	private Object invokeForStage(MethodInvocation invocation, LockedCall call) throws Throwable {
		Acquired acquired = acquire(call);
		if (acquired.failure() != null) {
			return stageOf(call, acquired.failure());
		}
		Object result;
		try {
			LockContext.push(acquired.tokens(call.locks().offersFencingTokens()));
			try {
				result = invocation.proceed();
			}
			finally {
				LockContext.pop();
			}
		}
		catch (Throwable ex) {
			release(call, acquired);
			throw ex;
		}
		if (!(result instanceof CompletionStage<?> stage)) {
			release(call, acquired);
			return result;
		}
		Class<?> declared = call.attribute().method().getReturnType();
		if (declared != CompletableFuture.class && declared != CompletionStage.class) {
			// A stage type of its own: the method's declared type must be returned, so the work's stage.
			stage.whenCompleteAsync((value, error) -> release(call, acquired), RELEASES);
			return result;
		}
		// The caller gets a future of its own that follows the work's: completing or cancelling it
		// (cancel(), orTimeout()) ends neither the work nor its hold. The release is attached to a
		// stage nobody else can complete, since a completed dependent skips its action; it runs off
		// the completing thread (maybe an I/O event loop), and the caller's future completes after it.
		CompletableFuture<Object> returned = new CompletableFuture<>();
		stage.whenCompleteAsync((value, error) -> {
			try {
				release(call, acquired);
			}
			finally {
				if (error != null) {
					returned.completeExceptionally(error);
				}
				else {
					returned.complete(value);
				}
			}
		}, RELEASES);
		return returned;
	}

	private Object stageOf(LockedCall call, LockFailure failure) {
		Object value;
		try {
			value = failureValue(call, failure);
		}
		catch (Throwable ex) {
			// THROW: the caller of a future-returning method expects a failed future, not a throw.
			return CompletableFuture.failedFuture(ex);
		}
		if (value instanceof CompletionStage<?> stage) {
			return (CompletableFuture.class.isAssignableFrom(call.attribute().method().getReturnType()))
					? stage.toCompletableFuture() : stage;
		}
		return CompletableFuture.completedFuture(value);
	}

	/**
	 * Takes every lock of the call for its work, on the calling thread, within one wait, all or none.
	 * @return the holds, or the failure (the holds taken so far released)
	 */
	Acquired acquire(LockedCall call) {
		List<WorkHold> held = new ArrayList<>(call.names().size());
		long start = System.nanoTime();
		Throwable cause;
		try {
			cause = LockOrigin.during(call.attribute().logicalName(), call.attribute().description(),
					() -> LockAspectSupport.acquireAll(call, start, held,
							(name, left) -> call.locks().tryLockForWork(name, left, call.leaseTime()).orElse(null)));
		}
		catch (RuntimeException | Error ex) {
			giveBack(call, held);
			observeAcquisition(call, DistributedLockObserver.Outcome.FAILED, LockAspectSupport.waitedSince(start));
			throw ex;
		}
		Duration waited = LockAspectSupport.waitedSince(start);
		if (held.size() == call.names().size()) {
			observeAcquisition(call, DistributedLockObserver.Outcome.ACQUIRED, waited);
			return new Acquired(List.copyOf(held), null, System.nanoTime());
		}
		giveBack(call, held);
		observeAcquisition(call, (cause == null) ? DistributedLockObserver.Outcome.TIMED_OUT
				: DistributedLockObserver.Outcome.FAILED, waited);
		return new Acquired(List.of(), LockAspectSupport.failure(call, waited, cause), 0);
	}

	/**
	 * Releases the call's holds in reverse order. The work has ended, so nobody is left to throw to:
	 * a hold lost meanwhile was reported to the {@code LockListener}s already, and is logged.
	 */
	void release(LockedCall call, Acquired acquired) {
		if (!acquired.released().compareAndSet(false, true)) {
			return;
		}
		try {
			LockAspectSupport.releaseQuietly(acquired.holds(), LockAspectSupport.RELEASE_WORK, WorkHold::lockName,
					call.attribute(), acquired.acquiredAt(), call.attribute().description());
		}
		finally {
			if (!acquired.holds().isEmpty()) {
				this.support.observeRelease(call.attribute(), acquired.acquiredAt());
			}
		}
	}

	/** Gives back holds taken for work that will not run, at once (no {@code holdAtLeast}). */
	static void giveBack(LockedCall call, List<WorkHold> held) {
		LockAspectSupport.releaseQuietly(held, LockAspectSupport.RELEASE_WORK, WorkHold::lockName, null, 0,
				call.attribute().description());
	}

	Object failureValue(LockedCall call, LockFailure failure) throws Throwable {
		return this.support.onFailure(call, failure);
	}

	void observeAcquisition(LockedCall call, DistributedLockObserver.Outcome outcome, Duration waited) {
		this.support.observeAcquisition(call, outcome, waited);
	}

	static ThreadFactory daemon(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return runnable -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

}
