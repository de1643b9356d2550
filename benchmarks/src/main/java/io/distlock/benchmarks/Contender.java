package io.distlock.benchmarks;

import java.util.concurrent.locks.Lock;

/**
 * A lock library under test. Each {@link Client} is independent (its own connections), as one
 * application instance would be.
 */
interface Contender {

	String name();

	Client newClient();

	/** One independent client of the library. */
	interface Client extends AutoCloseable {

		Lock lock(String key);

		@Override
		void close();

	}

}
