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

		/**
		 * @param locks the library's lock for a key
		 * @param close releases the client's connections
		 * @return a client made of the two
		 */
		static Client of(java.util.function.Function<String, Lock> locks, Runnable close) {
			return new Client() {
				public Lock lock(String key) {
					return locks.apply(key);
				}

				public void close() {
					close.run();
				}
			};
		}

	}

}
