package io.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

import io.distlock.core.LockBackend.HoldRef;
import io.distlock.zookeeper.ZooKeeperHolds.Held;

/**
 * Renews this client's holds: a hold is renewed if it is the one the renewal names (not a later
 * hold of its owner) and its node is still there, created by the current session, checked for a
 * whole batch in one pipelined round trip.
 */
final class ZooKeeperRenewals {

	private final ZooKeeperConnection connection;

	private final ZooKeeperHolds holds;

	ZooKeeperRenewals(ZooKeeperConnection connection, ZooKeeperHolds holds) {
		this.connection = connection;
		this.holds = holds;
	}

	List<Boolean> renew(List<HoldRef> refs, Duration lease, Duration within) {
		ZooKeeper zk;
		try {
			zk = this.connection.zooKeeper();
		}
		catch (Exception ex) {
			throw this.connection.failure(ex);
		}
		long session = zk.getSessionId();
		AtomicReferenceArray<Object> answers = new AtomicReferenceArray<>(refs.size());
		List<Held> checked = new ArrayList<>();
		List<Integer> positions = new ArrayList<>();
		for (int i = 0; i < refs.size(); i++) {
			HoldRef ref = refs.get(i);
			Held hold = this.holds.get(ref);
			if (hold == null || !hold.namedBy(ref) || hold.gone || hold.session != session) {
				// Only the hold named is forgotten: a later hold of its owner (the named one was released
				// since) is neither renewed nor forgotten, and keeps its own lease.
				if (hold != null && hold.namedBy(ref)) {
					this.holds.forget(hold);
				}
				answers.set(i, Boolean.FALSE);
			}
			else {
				checked.add(hold);
				positions.add(i);
			}
		}
		if (!checked.isEmpty()) {
			if (!this.connection.isConnected()) {
				throw this.connection.failure(new KeeperException.ConnectionLossException());
			}
			// One pipelined round trip for the batch, on the handle of the holds' own session.
			CountDownLatch answered = new CountDownLatch(checked.size());
			long start = System.nanoTime();
			for (int k = 0; k < checked.size(); k++) {
				Held hold = checked.get(k);
				int position = positions.get(k);
				zk.exists(this.connection.fullPath(hold.path), false, (rc, path, ctx, stat) -> {
					KeeperException.Code code = KeeperException.Code.get(rc);
					if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
						answers.set(position, stat != null && stat.getCzxid() == hold.czxid);
					}
					else {
						answers.set(position, KeeperException.create(code, path));
					}
					answered.countDown();
				}, null);
			}
			try {
				Duration wait = (within != null) ? within : this.connection.connectionTimeout();
				if (!answered.await(Math.max(1, ZooKeeperHolds.saturatedNanos(wait)), TimeUnit.NANOSECONDS)) {
					throw this.connection.failure(new KeeperException.OperationTimeoutException());
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw this.connection.failure(ex);
			}
			for (int k = 0; k < checked.size(); k++) {
				Object answer = answers.get(positions.get(k));
				if (answer instanceof KeeperException.SessionExpiredException) {
					answers.set(positions.get(k), Boolean.FALSE);
				}
				else if (answer instanceof KeeperException keeper) {
					throw this.connection.failure(keeper);
				}
			}
			for (int k = 0; k < checked.size(); k++) {
				Held hold = checked.get(k);
				if (Boolean.TRUE.equals(answers.get(positions.get(k)))) {
					this.connection.hookQuietly("renew-checked", hold.name);
					// From the start of the check: the node was there no earlier than that. A lease that ran
					// out, or a session lost, since the check leaves a deleted node: not renewed.
					if (!extendFrom(hold, start, lease)) {
						answers.set(positions.get(k), Boolean.FALSE);
					}
				}
				else {
					this.holds.forget(hold);
				}
			}
		}
		List<Boolean> renewed = new ArrayList<>(refs.size());
		for (int i = 0; i < refs.size(); i++) {
			renewed.add(Boolean.TRUE.equals(answers.get(i)));
		}
		return renewed;
	}

	private boolean extendFrom(Held hold, long start, Duration lease) {
		long left = start + ZooKeeperHolds.saturatedNanos(lease) - System.nanoTime();
		return this.holds.extendIfLive(hold, Duration.ofNanos(Math.max(0, left)));
	}

}
