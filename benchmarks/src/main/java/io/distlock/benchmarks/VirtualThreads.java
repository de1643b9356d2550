package io.distlock.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Virtual threads where the JVM has them (Java 21+), looked up at run time: the harness is compiled
 * for Java 17 and runs on either.
 */
final class VirtualThreads {

	private VirtualThreads() {
	}

	static boolean available() {
		try {
			Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
			return true;
		}
		catch (NoSuchMethodException ex) {
			return false;
		}
	}

	/** @return an executor that starts a virtual thread per task */
	static ExecutorService executor() {
		try {
			return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("This JVM (" + Runtime.version() + ") has no virtual threads; run on Java 21+", ex);
		}
	}

}
