package io.distlock.aop;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

import io.distlock.WorkHold;
import io.distlock.annotation.LockFailure;

/**
 * All of a deferred call's holds, or why it has none: released once, however many ways its work
 * ends (completes, fails, is cancelled), and claimed by the work or given back unused, never both.
 * @param holds the holds, in the order they were taken
 * @param failure why there are none, or {@code null}
 * @param acquiredAt when the last was taken ({@link System#nanoTime()}), for {@code holdAtLeast}
 * @param observation the call's observation, whose hold ends with the release
 * @param released whether they were released
 * @param phase taken, in use by the work, or given back
 * @param ending what must end before holds whose work was cancelled are released, if anything
 */
record WorkHolds(List<WorkHold> holds, LockFailure failure, long acquiredAt, LockObservation observation,
		AtomicBoolean released, AtomicInteger phase, AtomicReference<Ending> ending) {

	/** Numbers the release threads. */
	private static final AtomicInteger RELEASE_THREADS = new AtomicInteger();

	/**
	 * Where holds are released when their work ends: off the completing thread (an event loop, a
	 * cancelling caller), and apart from the threads that wait for locks, so that releases never
	 * queue behind the waits they would end. Releases are bounded by the hold's lease.
	 */
	static final ExecutorService RELEASES = Executors.newCachedThreadPool(runnable -> {
		Thread thread = new Thread(runnable, "distlock-release-" + RELEASE_THREADS.incrementAndGet());
		thread.setDaemon(true);
		return thread;
	});

	private static final int TAKEN = 0;

	private static final int IN_USE = 1;

	private static final int GIVEN_BACK = 2;

	WorkHolds(List<WorkHold> holds, LockFailure failure, long acquiredAt, LockObservation observation) {
		this(holds, failure, acquiredAt, observation, new AtomicBoolean(), new AtomicInteger(TAKEN),
				new AtomicReference<>());
	}

	/**
	 * Runs {@code then} once the work's cancelled body has really stopped: at once, unless the work
	 * said what to wait for ({@link #ending}).
	 * @param then what to run
	 */
	void afterCancelledWork(Runnable then) {
		Ending body = this.ending.get();
		if (body == null) {
			then.run();
		}
		else {
			body.whenEnded(then);
		}
	}

	/** @return the holds of a call whose work may run, observed by {@code observation} until released */
	static WorkHolds taken(List<WorkHold> holds, LockObservation observation) {
		return new WorkHolds(List.copyOf(holds), null, System.nanoTime(), observation);
	}

	/** @return no holds, and why: the method's policy answers the call */
	static WorkHolds notTaken(LockFailure failure) {
		return new WorkHolds(List.of(), failure, 0, LockObservation.NONE);
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

	/**
	 * Releases the holds in reverse order, once. The work has ended, so nobody is left to throw to:
	 * a hold lost meanwhile was reported to the {@code LockListener}s already, and is logged.
	 */
	void release(LockAspectSupport support, LockedCall call) {
		release(support, call, null);
	}

	/**
	 * Releases as {@link #release(LockAspectSupport, LockedCall)}, when the work ended with {@code error}
	 * (its observation records it).
	 */
	void release(LockAspectSupport support, LockedCall call, Throwable error) {
		if (!this.released.compareAndSet(false, true)) {
			return;
		}
		try {
			LockAspectSupport.releaseQuietly(this.holds, LockAspectSupport.RELEASE_WORK, WorkHold::lockName,
					call.attribute(), this.acquiredAt, call.attribute().description());
		}
		finally {
			if (!this.holds.isEmpty()) {
				support.observeRelease(call.attribute(), this.acquiredAt, this.observation, error);
			}
		}
	}

	/** Work that goes on for a while after it was cancelled: a suspend function's coroutine. */
	interface Ending {

		/** @param then run once the work has ended, or at once if it has */
		void whenEnded(Runnable then);

	}

	/** Gives back holds taken for work that will not run, at once (no {@code holdAtLeast}). */
	static void giveBack(LockedCall call, List<WorkHold> held) {
		LockAspectSupport.releaseQuietly(held, LockAspectSupport.RELEASE_WORK, WorkHold::lockName, null, 0,
				call.attribute().description());
	}

}
