package io.distlock.testing;

/**
 * What a test can tell about another thread without a hook in production code.
 */
public final class ThreadStates {

	private ThreadStates() {
	}

	/**
	 * Whether the thread sleeps in the engine's release wait, rather than merely being blocked on a
	 * server reply (which looks the same from the thread state alone).
	 * @param thread the thread
	 * @return true if parked waiting for a release
	 */
	public static boolean parkedWaitingForRelease(Thread thread) {
		if (thread.getState() != Thread.State.TIMED_WAITING) {
			return false;
		}
		for (StackTraceElement frame : thread.getStackTrace()) {
			if (frame.getClassName().endsWith(".WaitingRoom") && frame.getMethodName().equals("awaitTurn")) {
				return true;
			}
		}
		return false;
	}

}
