package io.distlock.core;

/**
 * Runs a clean-up on the way out of an acquisition without losing why it is leaving: a clean-up
 * that fails after the acquisition failed is added to that failure as suppressed, never thrown in
 * its place. An {@code Error} raised while a caller waits (a StackOverflowError, an
 * OutOfMemoryError, a tool's such as BlockHound's) must reach the caller as itself, not as whatever
 * the clean-up ran into next.
 */
final class CleanUp {

	private CleanUp() {
	}

	/**
	 * Runs {@code step}; if it throws and {@code failure} is not null, its throwable is added to
	 * {@code failure} and the method returns normally (the caller rethrows {@code failure}).
	 * @param failure what the acquisition is leaving with, or null if it is leaving normally
	 * @param step the clean-up
	 */
	static void after(Throwable failure, Runnable step) {
		if (failure == null) {
			step.run();
			return;
		}
		try {
			step.run();
		}
		catch (Throwable ex) {
			if (ex != failure) {
				failure.addSuppressed(ex);
			}
		}
	}

}
