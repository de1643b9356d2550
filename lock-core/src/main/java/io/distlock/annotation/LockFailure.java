package io.distlock.annotation;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

/**
 * A {@link DistributedLock} call that did not get its lock, as given to a {@link LockFailureHandler}.
 *
 * @param lockNames the locks the method needed
 * @param method the method, which was not run
 * @param target the bean the method was called on
 * @param arguments the call's arguments
 * @param waited how long the caller waited
 * @param cause the backend failure, or {@code null} if the lock was busy
 */
public record LockFailure(List<String> lockNames, Method method, Object target, Object[] arguments, Duration waited,
		Throwable cause) {
}
