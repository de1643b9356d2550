package io.distlock.autoconfigure;

import java.util.List;

import org.springframework.context.ApplicationEventPublisher;

import io.distlock.LockListener;
import io.distlock.autoconfigure.LockLostEvent;
import io.distlock.autoconfigure.LockRenewalFailedEvent;
import io.distlock.LostHold;

/**
 * Publishes lost holds and failed renewals as Spring application events, so that an application
 * can react with an ordinary {@code @EventListener}.
 */
class ApplicationEventLockListener implements LockListener {

	private final ApplicationEventPublisher publisher;

	ApplicationEventLockListener(ApplicationEventPublisher publisher) {
		this.publisher = publisher;
	}

	@Override
	public void holdLost(LostHold lost) {
		this.publisher.publishEvent(new LockLostEvent(this, lost));
	}

	@Override
	public void renewalFailed(List<String> lockNames, Throwable cause) {
		this.publisher.publishEvent(new LockRenewalFailedEvent(this, lockNames, cause));
	}

}
