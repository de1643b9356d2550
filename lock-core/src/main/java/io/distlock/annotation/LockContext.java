package io.distlock.annotation;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * What a running {@link DistributedLock} method can ask about its locks, chiefly the fencing token to
 * hand to the resource it protects:
 *
 * <pre>{@code
 * @DistributedLock(key = "'stock:' + #sku")
 * public void sell(String sku) {
 *     stockStore.decrement(sku, LockContext.fencingToken());
 * }
 * }</pre>
 */
public final class LockContext {

	private static final ThreadLocal<Deque<Map<String, LongSupplier>>> FRAMES = ThreadLocal.withInitial(ArrayDeque::new);

	private LockContext() {
	}

	/**
	 * The fencing token of the innermost running {@code @DistributedLock} method's lock.
	 * @return the token
	 * @throws IllegalStateException if no such method is running on this thread, or it holds
	 * several locks (use {@link #fencingToken(String)})
	 */
	public static long fencingToken() {
		Map<String, LongSupplier> frame = FRAMES.get().peek();
		if (frame == null) {
			throw new IllegalStateException("No @DistributedLock method is running on this thread");
		}
		if (frame.size() != 1) {
			throw new IllegalStateException("The running @DistributedLock method holds locks " + frame.keySet()
					+ "; ask for one by name with LockContext.fencingToken(lockName)");
		}
		return fencingToken(frame.keySet().iterator().next());
	}

	/**
	 * The fencing token of one lock of the innermost running {@code @DistributedLock} method.
	 * @param lockName the lock's full name (name prefix and key)
	 * @return the token, issued on the first request where the backend defers it (one round trip)
	 * @throws IllegalStateException if that method holds no lock of that name
	 * @throws io.distlock.LockLostException if the hold was lost before its token was issued
	 */
	public static long fencingToken(String lockName) {
		Map<String, LongSupplier> frame = FRAMES.get().peek();
		if (frame != null && frame.containsKey(lockName) && frame.get(lockName) == null) {
			throw new IllegalStateException("Lock '" + lockName + "' has no fencing token: its backend (Redlock) "
					+ "cannot issue tokens that are guaranteed to grow");
		}
		LongSupplier token = (frame != null) ? frame.get(lockName) : null;
		if (token == null) {
			throw new IllegalStateException("The running @DistributedLock method holds no lock '" + lockName + "'"
					+ ((frame != null) ? "; it holds " + frame.keySet() : ""));
		}
		return token.getAsLong();
	}

	/**
	 * The names of the locks the innermost running {@code @DistributedLock} method holds, in the
	 * order they were acquired.
	 * @return the lock names; empty if no such method is running on this thread
	 */
	public static Set<String> lockNames() {
		Map<String, LongSupplier> frame = FRAMES.get().peek();
		return (frame != null) ? Collections.unmodifiableSet(frame.keySet()) : Set.of();
	}

	/**
	 * Fails unless a {@code @DistributedLock} method runs on this thread with its locks held: put it
	 * first in a method that must only ever run locked, so that a call around the proxy (from the
	 * bean's own class, which Spring AOP cannot intercept) fails loudly instead of running unlocked.
	 * Like {@link #fencingToken()}, it sees the method's synchronous part only.
	 * @throws IllegalStateException naming the calling method, if no locked invocation runs on this thread
	 */
	public static void assertLocked() {
		if (FRAMES.get().isEmpty()) {
			throw new IllegalStateException(notLocked(caller(), "holds no @DistributedLock lock"));
		}
	}

	/**
	 * {@link #assertLocked()} for one lock: fails unless a running {@code @DistributedLock} method of
	 * this thread, the innermost or one it was called from, holds {@code lockName}.
	 * @param lockName the lock's full name (name prefix and key), as {@link #lockNames()} lists it
	 * @throws IllegalStateException naming the calling method and the locks it does hold, if none holds
	 * {@code lockName}
	 */
	public static void assertLocked(String lockName) {
		Deque<Map<String, LongSupplier>> frames = FRAMES.get();
		for (Map<String, LongSupplier> frame : frames) {
			if (frame.containsKey(lockName)) {
				return;
			}
		}
		Set<String> held = new LinkedHashSet<>();
		frames.forEach(frame -> held.addAll(frame.keySet()));
		throw new IllegalStateException(notLocked(caller(),
				"does not hold lock '" + lockName + "'" + (held.isEmpty() ? "" : " (it holds " + held + ")")));
	}

	private static String notLocked(String method, String problem) {
		return method + " runs without its lock: the thread " + problem + ". A @DistributedLock method called "
				+ "from its own class bypasses the Spring proxy and runs unlocked; call it through the bean (inject it, "
				+ "or move the method to another bean). See docs/annotation.md#self-invocation";
	}

	/** @return {@code Class.method} of whoever called {@code assertLocked}, for the message */
	private static String caller() {
		return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
			.walk(frames -> frames.filter(frame -> frame.getDeclaringClass() != LockContext.class)
				.findFirst()
				.map(frame -> frame.getDeclaringClass().getSimpleName() + "." + frame.getMethodName())
				.orElse("The caller"));
	}

	/**
	 * Enters a method's lock frame; for the interceptor.
	 * @param tokens lock name to what gives its fencing token ({@code null} where the backend offers
	 * none); asked only when the method asks, as a backend may issue a token on request only
	 */
	public static void push(Map<String, LongSupplier> tokens) {
		FRAMES.get().push(tokens);
	}

	/** Leaves the innermost frame; for the interceptor. */
	public static void pop() {
		Deque<Map<String, LongSupplier>> frames = FRAMES.get();
		frames.pop();
		if (frames.isEmpty()) {
			FRAMES.remove();
		}
	}

}
