package io.distlock.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A TCP relay on a free loopback port that forwards each connection to a target port, which a test
 * can change ({@link #retarget}), whose connections it can cut ({@link #cutAll}) and slow down
 * ({@link #delay}): a name in a client's configuration that starts to reach another server after a
 * reconnect, a flaky network, a slow one. Written here because no library on the build's classpath
 * does this without Docker (Toxiproxy needs it).
 */
public final class TcpRelay implements AutoCloseable {

	private final ServerSocket listener;

	private final List<Socket> open = new CopyOnWriteArrayList<>();

	private volatile int targetPort;

	/** The least and most delay of each chunk sent towards the target, in nanoseconds; 0: none. */
	private volatile long[] delayNanos = { 0, 0 };

	private volatile boolean closed;

	/** Whether bytes are dropped instead of relayed (see {@link #drop()}). */
	private volatile boolean dropping;

	/**
	 * Starts relaying to {@code targetPort} on 127.0.0.1.
	 * @param targetPort where connections go
	 */
	public TcpRelay(int targetPort) {
		this.targetPort = targetPort;
		try {
			this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		Thread acceptor = new Thread(this::accept, "tcp-relay-" + port());
		acceptor.setDaemon(true);
		acceptor.start();
	}

	/** @return the port clients connect to */
	public int port() {
		return this.listener.getLocalPort();
	}

	/** @param targetPort where new connections go from now on */
	public void retarget(int targetPort) {
		this.targetPort = targetPort;
	}

	/**
	 * Delays every chunk of bytes sent towards the target by a random time between {@code least}
	 * and {@code most} from now on; {@link Duration#ZERO} for both ends it. Replies are not delayed
	 * again: one delay per round trip, as a slow link between a client and its server would add.
	 * @param least the shortest delay
	 * @param most the longest delay
	 */
	public void delay(Duration least, Duration most) {
		this.delayNanos = new long[] { least.toNanos(), Math.max(least.toNanos(), most.toNanos()) };
	}

	/**
	 * Drops every byte in both directions from now on, while the connections stay open: a partition
	 * that TCP does not notice, in which whatever one side sends is lost, as a replica's link that
	 * breaks right after its master granted a lock. {@link #pass()} ends it.
	 */
	public void drop() {
		this.dropping = true;
	}

	/** Relays bytes again after {@link #drop()}; what was dropped meanwhile stays lost. */
	public void pass() {
		this.dropping = false;
	}

	/** Closes every relayed connection; clients see their connection reset. */
	public void cutAll() {
		for (Socket socket : this.open) {
			closeQuietly(socket);
		}
		this.open.clear();
	}

	@Override
	public void close() {
		this.closed = true;
		closeQuietly(this.listener);
		cutAll();
	}

	private void accept() {
		while (!this.closed) {
			try {
				Socket client = this.listener.accept();
				Socket server = new Socket();
				try {
					server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.targetPort), 2000);
				}
				catch (IOException ex) {
					closeQuietly(client);
					closeQuietly(server);
					continue;
				}
				this.open.add(client);
				this.open.add(server);
				pump(client, server, true);
				pump(server, client, false);
			}
			catch (IOException ex) {
				if (!this.closed) {
					continue;
				}
				return;
			}
		}
	}

	private void pump(Socket from, Socket to, boolean towardsTarget) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[8192];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) != -1) {
					if (towardsTarget) {
						pause();
					}
					if (this.dropping) {
						continue;
					}
					out.write(buffer, 0, read);
					out.flush();
				}
			}
			catch (IOException ex) {
				// The other side closed or the relay cut it.
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
				this.open.remove(from);
				this.open.remove(to);
			}
		}, "tcp-relay-pump-" + port());
		thread.setDaemon(true);
		thread.start();
	}

	private void pause() throws IOException {
		long[] delay = this.delayNanos;
		if (delay[1] == 0) {
			return;
		}
		long nanos = (delay[0] == delay[1]) ? delay[0] : ThreadLocalRandom.current().nextLong(delay[0], delay[1] + 1);
		try {
			Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IOException("Interrupted while delaying", ex);
		}
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// Closing anyway.
		}
	}

}
