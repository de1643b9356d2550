package io.distlock.aop;

import java.util.Map;
import java.util.function.LongSupplier;

import io.distlock.annotation.LockContext;
import kotlin.Unit;
import kotlin.coroutines.AbstractCoroutineContextElement;
import kotlin.coroutines.Continuation;
import kotlin.coroutines.CoroutineContext;
import kotlinx.coroutines.Job;
import kotlinx.coroutines.ThreadContextElement;

/**
 * Follows the coroutine that runs a locked {@code suspend} function's body, so that its locks are
 * released only after that coroutine has ended, and the body sees its fencing tokens.
 *
 * <p>Spring runs a proxied suspend function in a coroutine of its own, with no parent, and hands
 * distlock only the Mono that coroutine completes. A cancel of that Mono asks the coroutine to stop
 * and returns at once, while the body may still be running its {@code finally} blocks or
 * non-cancellable parts: releasing then would let the next holder in beside it. This element rides
 * in the coroutine's context (Spring passes the caller's context on, without its job), learns the
 * coroutine's job the first time the coroutine runs on a thread, and on every resumption gives the
 * thread the call's {@link LockContext}. Loaded only for suspend functions, so only where Kotlin
 * coroutines are on the classpath.
 */
final class CoroutineBody extends AbstractCoroutineContextElement
		implements ThreadContextElement<Object>, WorkHolds.Ending {

	private static final Key KEY = new Key();

	private final Map<String, LongSupplier> tokens;

	private volatile Job job;

	private CoroutineBody(Map<String, LongSupplier> tokens) {
		super(KEY);
		this.tokens = tokens;
	}

	/**
	 * @param arguments a suspend function's arguments, its caller's continuation last
	 * @param tokens the call's fencing tokens, for {@link LockContext} inside the body
	 * @return the body to follow; its continuation, with the body in its context, is put in the
	 * arguments' last place
	 */
	static CoroutineBody follow(Object[] arguments, Map<String, LongSupplier> tokens) {
		CoroutineBody body = new CoroutineBody(tokens);
		@SuppressWarnings("unchecked")
		Continuation<Object> caller = (Continuation<Object>) arguments[arguments.length - 1];
		CoroutineContext context = caller.getContext().plus(body);
		arguments[arguments.length - 1] = new Continuation<Object>() {

			@Override
			public CoroutineContext getContext() {
				return context;
			}

			@Override
			public void resumeWith(Object result) {
				caller.resumeWith(result);
			}

		};
		return body;
	}

	/**
	 * Runs {@code then} once the body's coroutine has ended, or at once if it never ran: one that
	 * had not run when it was cancelled will not run at all (the coroutine checks for a cancel before
	 * its first step, after this element has seen it).
	 * @param then what to run
	 */
	@Override
	public void whenEnded(Runnable then) {
		Job running = this.job;
		if (running == null || running.isCompleted()) {
			then.run();
			return;
		}
		running.invokeOnCompletion(cause -> {
			then.run();
			return Unit.INSTANCE;
		});
	}

	@Override
	public Object updateThreadContext(CoroutineContext context) {
		if (this.job == null) {
			// The outermost coroutine runs first; its children carry this element too, and end first.
			this.job = context.get(Job.Key);
		}
		LockContext.push(this.tokens);
		return null;
	}

	@Override
	public void restoreThreadContext(CoroutineContext context, Object oldState) {
		LockContext.pop();
	}

	/** The key of this element in a coroutine's context. */
	private static final class Key implements CoroutineContext.Key<CoroutineBody> {

	}

}
