package io.distlock.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.aopalliance.intercept.MethodInvocation;

import io.distlock.LockOrigin;
import io.distlock.WorkHold;
import io.distlock.annotation.LockContext;
import io.distlock.annotation.LockFailure;
import io.micrometer.observation.Observation;

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

	private final LockAspectSupport support;

	DeferredLocking(LockAspectSupport support) {
		this.support = support;
	}

	Object invoke(MethodInvocation invocation, LockedCall call) throws Throwable {
		if (CompletionStage.class.isAssignableFrom(call.attribute().method().getReturnType())) {
			return invokeForStage(invocation, call);
		}
		return ReactorLocking.invoke(this.support, invocation, call);
	}

	private Object invokeForStage(MethodInvocation invocation, LockedCall call) throws Throwable {
		WorkHolds acquired = acquire(call);
		if (acquired.failure() != null) {
			return stageOf(call, acquired.failure());
		}
		Object result;
		try {
			LockContext.push(acquired.tokens(call.locks().offersFencingTokens()));
			try (LockObservation.HoldScope scope = acquired.observation().openHoldScope()) {
				result = invocation.proceed();
			}
			finally {
				LockContext.pop();
			}
		}
		catch (Throwable ex) {
			acquired.release(this.support, call, ex);
			throw ex;
		}
		if (!(result instanceof CompletionStage<?> stage)) {
			acquired.release(this.support, call);
			return result;
		}
		Class<?> declared = call.attribute().method().getReturnType();
		if (declared != CompletableFuture.class && declared != CompletionStage.class) {
			// A stage type of its own: the method's declared type must be returned, so the work's stage.
			stage.whenCompleteAsync((value, error) -> acquired.release(this.support, call, error), WorkHolds.RELEASES);
			return result;
		}
		// The caller gets a future of its own that follows the work's: completing or cancelling it
		// (cancel(), orTimeout()) ends neither the work nor its hold. The release is attached to a
		// stage nobody else can complete, since a completed dependent skips its action; it runs off
		// the completing thread (maybe an I/O event loop), and the caller's future completes after it.
		CompletableFuture<Object> returned = new CompletableFuture<>();
		stage.whenCompleteAsync((value, error) -> {
			try {
				acquired.release(this.support, call, error);
			}
			finally {
				if (error != null) {
					returned.completeExceptionally(error);
				}
				else {
					returned.complete(value);
				}
			}
		}, WorkHolds.RELEASES);
		return returned;
	}

	private Object stageOf(LockedCall call, LockFailure failure) {
		Object value;
		try {
			value = this.support.onFailure(call, failure);
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
	WorkHolds acquire(LockedCall call) {
		List<WorkHold> held = new ArrayList<>(call.names().size());
		LockObservation observation = this.support.startObservation(call, this.support.currentObservation());
		long start = System.nanoTime();
		Throwable cause;
		try {
			cause = LockOrigin.during(call.attribute().logicalName(), call.attribute().description(),
					() -> LockAspectSupport.acquireAll(call, start, held,
							(name, left) -> call.tryLockForWork(name, left).orElse(null)));
		}
		catch (RuntimeException | Error ex) {
			Duration waited = LockAspectSupport.waitedSince(start);
			WorkHolds.giveBack(call, held);
			this.support.observeAcquisition(call, observation, DistributedLockObserver.Outcome.FAILED, waited, ex);
			throw ex;
		}
		Duration waited = LockAspectSupport.waitedSince(start);
		if (held.size() == call.names().size()) {
			this.support.observeAcquisition(call, observation, DistributedLockObserver.Outcome.ACQUIRED, waited, null);
			return WorkHolds.taken(held, observation);
		}
		WorkHolds.giveBack(call, held);
		this.support.observeAcquisition(call, observation, (cause == null) ? DistributedLockObserver.Outcome.TIMED_OUT
				: DistributedLockObserver.Outcome.FAILED, waited, cause);
		return WorkHolds.notTaken(LockAspectSupport.failure(call, waited, cause));
	}

}
