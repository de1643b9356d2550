package io.distlock.aop;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import org.springframework.expression.EvaluationContext;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.WorkHold;
import io.distlock.annotation.LockMode;

/**
 * One call of a locked method, ready to lock: its keys evaluated into lock names, its registry and
 * its wait and lease chosen. What every path of the aspect (blocking, future, reactive) starts from.
 * @param attribute the method's parsed annotation
 * @param locks the registry its locks come from
 * @param names the lock names, in the order they are taken
 * @param waitTime how long to wait for all of them together
 * @param leaseTime the lease of each hold, or {@code null} for the watchdog
 * @param context the evaluation context of the call, for the fallback expression
 * @param target the bean called
 * @param arguments the call's arguments
 */
record LockedCall(LockAttribute attribute, LockRegistry locks, List<String> names, Duration waitTime,
		Duration leaseTime, EvaluationContext context, Object target, Object[] arguments) {

	/**
	 * @param name one of the call's lock names
	 * @return the lock the call takes for it: the name's exclusive lock, a side of its read-write
	 * lock, or a permit of its semaphore, as the annotation says
	 */
	DistLock lock(String name) {
		return switch (this.attribute.mode()) {
			case READ -> this.locks.getReadWriteLock(name).readLock();
			case WRITE -> this.locks.getReadWriteLock(name).writeLock();
			case EXCLUSIVE -> this.attribute.semaphore() ? this.locks.getSemaphore(name, this.attribute.permits()).asLock()
					: this.locks.getLock(name);
		};
	}

	/**
	 * Takes the call's lock of {@code name} for its work, waiting on the calling thread.
	 * @param name one of the call's lock names
	 * @param wait what is left of the call's wait
	 * @return the hold, or empty if the lock stayed taken
	 * @throws InterruptedException if interrupted while waiting
	 */
	Optional<WorkHold> tryLockForWork(String name, Duration wait) throws InterruptedException {
		// An exclusive lock through the registry: registries other than distlock's offer only that form.
		return isExclusiveLock() ? this.locks.tryLockForWork(name, wait, this.leaseTime)
				: lock(name).tryLockForWork(wait, this.leaseTime);
	}

	/**
	 * Takes the call's lock of {@code name} for its work, without blocking a thread.
	 * @param name one of the call's lock names
	 * @param wait what is left of the call's wait
	 * @return the hold, or empty if the lock stayed taken
	 */
	CompletableFuture<Optional<WorkHold>> tryLockForWorkAsync(String name, Duration wait) {
		return isExclusiveLock() ? this.locks.tryLockForWorkAsync(name, wait, this.leaseTime)
				: lock(name).tryLockForWorkAsync(wait, this.leaseTime);
	}

	private boolean isExclusiveLock() {
		return this.attribute.mode() == LockMode.EXCLUSIVE && !this.attribute.semaphore();
	}

}
