package io.distlock.docs;

import java.time.Duration;

import io.distlock.DistReadWriteLock;
import io.distlock.DistSemaphore;
import io.distlock.LockRegistry;

/**
 * The code of {@code docs/read-write-locks-and-semaphores.md}, compiled; see {@link DocsSnippetsTests}.
 */
@SuppressWarnings("unused")
class ReadWriteLockSnippets {

	record Report(String text) {
	}

	private LockRegistry lockRegistry;

	private Report cached;

	Report load() {
		return this.cached;
	}

	Report rebuild() {
		return new Report("fresh");
	}

	void callPaymentProvider() {
	}

	Report readBlock() {
		// tag::read-write[]
		DistReadWriteLock report = lockRegistry.getReadWriteLock("report:daily");

		report.readLock().lock();            // any number of readers, on any instances, at once
		try {
			return load();
		} finally {
			report.readLock().unlock();
		}
		// end::read-write[]
	}

	void writeBlock() throws InterruptedException {
		DistReadWriteLock report = lockRegistry.getReadWriteLock("report:daily");
		// tag::write[]
		if (report.writeLock().tryLock(Duration.ofSeconds(5))) {   // waits for the readers inside to leave
			try {
				cached = rebuild();
				long token = report.writeLock().getFencingToken();   // above every earlier writer's
			} finally {
				report.writeLock().unlock();
			}
		}
		// end::write[]
	}

	void downgrade() {
		DistReadWriteLock report = lockRegistry.getReadWriteLock("report:daily");
		// tag::downgrade[]
		report.writeLock().lock();
		try {
			cached = rebuild();
			report.readLock().lock();        // a downgrade: the writer may take the read lock at once
		} finally {
			report.writeLock().unlock();     // still reading; a waiting writer stays out until readLock().unlock()
		}
		try {
			load();
		} finally {
			report.readLock().unlock();
		}
		// end::downgrade[]
	}

	void semaphore() throws InterruptedException {
		// tag::semaphore[]
		DistSemaphore payments = lockRegistry.getSemaphore("payment-provider", 3);   // every instance says 3

		if (payments.tryAcquire(Duration.ofSeconds(2))) {   // at most 3 holders across all instances
			try {
				callPaymentProvider();
			} finally {
				payments.release();
			}
		}
		// end::semaphore[]
	}

}
