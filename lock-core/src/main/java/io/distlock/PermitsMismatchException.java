package io.distlock;

/**
 * An acquisition declared another number of permits than the semaphore has now: instances that
 * disagree on a semaphore's permits would each admit as many holders as they believe. A new number
 * takes effect once the semaphore is idle (no holder, nobody waiting).
 */
public class PermitsMismatchException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String semaphoreName;

	private final int permits;

	private final int existingPermits;

	/**
	 * @param semaphoreName the semaphore's name
	 * @param permits the permits this acquisition declared
	 * @param existingPermits the permits the semaphore has, as other instances declared them
	 * @param backend where the semaphore is kept, for the message
	 */
	public PermitsMismatchException(String semaphoreName, int permits, int existingPermits, String backend) {
		super("Semaphore '" + semaphoreName + "' was asked for with " + permits + " permits, but it has "
				+ existingPermits + " in " + backend + ", as other instances declared it. Every instance must "
				+ "declare the same permits for one name; a new number takes effect once nobody holds or "
				+ "waits for the semaphore.");
		this.semaphoreName = semaphoreName;
		this.permits = permits;
		this.existingPermits = existingPermits;
	}

	/** @return the semaphore's name */
	public String getSemaphoreName() {
		return this.semaphoreName;
	}

	/** @return the permits this acquisition declared */
	public int getPermits() {
		return this.permits;
	}

	/** @return the permits the semaphore has */
	public int getExistingPermits() {
		return this.existingPermits;
	}

}
