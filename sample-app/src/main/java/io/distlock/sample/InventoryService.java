package io.distlock.sample;

import org.springframework.core.env.Environment;
import org.springframework.stereotype.Service;

import io.distlock.annotation.DistributedLock;
import io.distlock.annotation.LockContext;

/**
 * Sells one unit: read the stock, check it, write it back. Two instances doing this at once sell
 * the same unit twice unless the read-check-write is one critical section.
 */
@Service
public class InventoryService {

	private final StockStore store;

	private final Environment environment;

	private final String instance = Long.toHexString(ProcessHandle.current().pid());

	public InventoryService(StockStore store, Environment environment) {
		this.store = store;
		this.environment = environment;
	}

	/** The safe way: under the item's lock, and the write fenced by the lock's token. */
	@DistributedLock(key = "'stock:' + #item", waitTime = "${inventory.lock-wait:5s}")
	public Sale sellOne(String item) {
		long stock = this.store.read(item);
		if (stock <= 0) {
			return sale(item, false, stock, null, "sold out");
		}
		long token = LockContext.fencingToken();
		if (!this.store.writeFenced(item, stock - 1, token)) {
			throw new StaleLockException(item, token);
		}
		return sale(item, true, stock - 1, token, "sold one, remaining " + (stock - 1));
	}

	/** The same read-check-write without a lock, to watch the oversell happen. */
	public Sale sellOneUnprotected(String item) {
		long stock = this.store.read(item);
		if (stock <= 0) {
			return sale(item, false, stock, null, "sold out");
		}
		this.store.writeUnfenced(item, stock - 1);
		return sale(item, true, stock - 1, null, "sold one, remaining " + (stock - 1));
	}

	public long stock(String item) {
		return this.store.read(item);
	}

	public void reset(String item, long quantity) {
		this.store.reset(item, quantity);
	}

	private Sale sale(String item, boolean sold, long remaining, Long token, String message) {
		int port = this.environment.getProperty("local.server.port", Integer.class, -1);
		return new Sale(item, sold, remaining, this.instance, port, token, message + ", port " + port);
	}

	/** The fenced write was rejected: this holder's lock had been superseded. */
	static class StaleLockException extends RuntimeException {

		private static final long serialVersionUID = 1L;

		StaleLockException(String item, long token) {
			super("Write to '" + item + "' with fencing token " + token + " rejected: a newer lock holder already wrote");
		}

	}

}
