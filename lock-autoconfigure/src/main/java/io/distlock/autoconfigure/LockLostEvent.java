package io.distlock.autoconfigure;

import org.springframework.context.ApplicationEvent;

import io.distlock.LostHold;

/**
 * Published in a Spring application when a hold is lost before its owner released it.
 */
public class LockLostEvent extends ApplicationEvent {

	private static final long serialVersionUID = 1L;

	private final transient LostHold lostHold;

	/**
	 * @param source the registry
	 * @param lostHold what was lost
	 */
	public LockLostEvent(Object source, LostHold lostHold) {
		super(source);
		this.lostHold = lostHold;
	}

	/** @return what was lost and why */
	public LostHold getLostHold() {
		return this.lostHold;
	}

}
