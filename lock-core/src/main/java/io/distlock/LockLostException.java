package io.distlock;

/**
 * Thrown by {@code unlock()} (or a reentrant acquisition) when the calling thread's hold was lost
 * before it released it: the lease ran out, the watchdog could not renew it, or the backend lost
 * its data. Extends {@link IllegalMonitorStateException}, which {@code Lock.unlock()} throws when the
 * caller does not hold the lock.
 */
public class LockLostException extends IllegalMonitorStateException {

	private static final long serialVersionUID = 1L;

	private final transient LostHold lostHold;

	/**
	 * @param lostHold the hold that was lost
	 */
	public LockLostException(LostHold lostHold) {
		super("Lock '" + lostHold.lockName() + "' was lost before its owner released it (" + lostHold.reason()
				+ "); the critical section may not have run exclusively. Use a lease long enough for the work, "
				+ "or no lease so the watchdog renews it, and check the fencing token at the protected resource");
		this.lostHold = lostHold;
	}

	/** @return the hold that was lost */
	public LostHold getLostHold() {
		return this.lostHold;
	}

}
