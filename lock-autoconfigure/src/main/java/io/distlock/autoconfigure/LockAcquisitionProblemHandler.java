package io.distlock.autoconfigure;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

import io.distlock.LockBackendException;
import io.distlock.LockNotAcquiredException;
import io.distlock.annotation.LockAcquisitionException;
import io.distlock.core.WarningWindow;

/**
 * Answers a request whose {@code @DistributedLock} method did not get its lock with an RFC 9457
 * problem instead of a 500: 409 Conflict when another holder kept the lock (the request may succeed
 * when retried), 503 Service Unavailable when the backend failed or serves its restart grace. Both
 * say when to retry in {@code Retry-After}. Works in Spring MVC and WebFlux alike.
 *
 * <p>Ordered last, and registered after the application's own beans, so an {@code @ExceptionHandler}
 * of the application's, in a controller or in a {@code @ControllerAdvice}, takes precedence (an advice
 * contributed by another auto-configuration needs an {@code @Order} of its own to be sure of it). The body names neither the method nor the lock: both
 * are the server's business; the exception's message, logged for 503s, has them.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class LockAcquisitionProblemHandler {

	private static final Logger log = LoggerFactory.getLogger(LockAcquisitionProblemHandler.class);

	/** A dead backend fails every locked request; one warning per interval says so. */
	private static final Duration WARN_INTERVAL = Duration.ofSeconds(30);

	private final Duration retryAfter;

	private final Clock clock;

	private final WarningWindow warnings = new WarningWindow(WARN_INTERVAL);

	/**
	 * @param retryAfter the {@code Retry-After} when the failure does not say how long it lasts
	 */
	public LockAcquisitionProblemHandler(Duration retryAfter) {
		this(retryAfter, Clock.systemUTC());
	}

	LockAcquisitionProblemHandler(Duration retryAfter, Clock clock) {
		if (retryAfter == null || retryAfter.isNegative() || retryAfter.isZero()) {
			throw new InvalidDistLockPropertyException("distlock.web.retry-after", retryAfter,
					"must be positive (a Retry-After of 0 invites every client back at once)",
					"Set distlock.web.retry-after to a duration such as 1s.");
		}
		this.retryAfter = retryAfter;
		this.clock = clock;
	}

	/**
	 * @param ex the method's failure to get its lock
	 * @return the problem response
	 */
	@ExceptionHandler(LockAcquisitionException.class)
	public ResponseEntity<ProblemDetail> handle(LockAcquisitionException ex) {
		return problem(ex.getCause(), ex);
	}

	/**
	 * The same for a lock taken by hand in a controller ({@code executeLocked}, {@code ReactiveLocks}),
	 * which throws the cause itself.
	 * @param ex the lock's refusal (busy, or the restart grace) or the backend's failure
	 * @return the problem response
	 */
	@ExceptionHandler({ LockNotAcquiredException.class, LockBackendException.class })
	public ResponseEntity<ProblemDetail> handleCause(RuntimeException ex) {
		return problem(ex, ex);
	}

	private ResponseEntity<ProblemDetail> problem(Throwable cause, RuntimeException ex) {
		Instant graceEnds = (cause instanceof LockNotAcquiredException refused)
				? refused.getRestartGraceEnds().orElse(null) : null;
		boolean busy = cause == null || (cause instanceof LockNotAcquiredException && graceEnds == null);
		HttpStatus status = busy ? HttpStatus.CONFLICT : HttpStatus.SERVICE_UNAVAILABLE;
		ProblemDetail problem = ProblemDetail.forStatus(status);
		if (busy) {
			problem.setTitle("Locked");
			problem.setDetail("Another request holds the lock this request needs; retry later.");
		}
		else if (graceEnds != null) {
			problem.setTitle("Lock service starting");
			problem.setDetail("The lock service lost its data and waits until earlier holders' leases have run out; "
					+ "retry later.");
		}
		else if (cause instanceof InterruptedException) {
			// The server is stopping, most likely: nothing to warn about.
			problem.setTitle("Lock service unavailable");
			problem.setDetail("The request was interrupted while it waited for a lock; retry later.");
		}
		else {
			problem.setTitle("Lock service unavailable");
			problem.setDetail("The lock service could not be reached; retry later.");
			warn(ex);
		}
		long seconds = seconds((graceEnds != null) ? Duration.between(this.clock.instant(), graceEnds) : this.retryAfter);
		return ResponseEntity.status(status).header(HttpHeaders.RETRY_AFTER, Long.toString(seconds)).body(problem);
	}

	/** @return whole seconds, rounded up, at least 1 (a Retry-After of 0 invites an immediate storm) */
	private static long seconds(Duration duration) {
		long millis = Math.max(duration.toMillis(), 1);
		return Math.max(1, (millis + 999) / 1000);
	}

	private void warn(RuntimeException ex) {
		long heldBack = this.warnings.enter(System.nanoTime());
		if (heldBack >= 0) {
			log.warn("Answered 503 to a request: {}{}", ex.getMessage(),
					(heldBack > 0) ? " (" + heldBack + " more such answer(s) since the last warning)" : "");
		}
	}

}
