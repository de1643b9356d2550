package io.distlock.autoconfigure;

import java.util.List;

import org.springframework.context.ApplicationEvent;

/**
 * Published in a Spring application when the watchdog could not reach the backend to renew holds.
 * They are not lost yet; a {@link LockLostEvent} follows if the lease runs out first.
 */
public class LockRenewalFailedEvent extends ApplicationEvent {

	private static final long serialVersionUID = 1L;

	private final List<String> lockNames;

	private final transient Throwable cause;

	/**
	 * @param source the registry
	 * @param lockNames the locks the watchdog tried to renew
	 * @param cause what the backend said
	 */
	public LockRenewalFailedEvent(Object source, List<String> lockNames, Throwable cause) {
		super(source);
		this.lockNames = List.copyOf(lockNames);
		this.cause = cause;
	}

	/** @return the locks the watchdog tried to renew */
	public List<String> getLockNames() {
		return this.lockNames;
	}

	/** @return what the backend said */
	public Throwable getCause() {
		return this.cause;
	}

}
