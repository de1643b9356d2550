package io.distlock.aop;

import java.time.Duration;
import java.util.List;

import org.springframework.expression.EvaluationContext;

import io.distlock.LockRegistry;

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
}
