package io.distlock.testing;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Closes what a test opened (connection factories, registries, relays, servers), the last opened
 * first, after the test's own {@code @AfterEach} (which may first stop the threads that use them):
 *
 * <pre>{@code
 * @RegisterExtension
 * final ClosedAfterEach opened = new ClosedAfterEach();
 * ...
 * this.opened.add(factory::destroy);
 * }</pre>
 */
public final class ClosedAfterEach implements AfterEachCallback {

	private final List<AutoCloseable> opened = new ArrayList<>();

	/**
	 * @param closeable closed after the test
	 * @return {@code closeable}
	 */
	public synchronized <T extends AutoCloseable> T add(T closeable) {
		this.opened.add(closeable);
		return closeable;
	}

	/** Closes everything, the last opened first; the first failure is thrown once all were tried. */
	@Override
	public void afterEach(ExtensionContext context) throws Exception {
		List<AutoCloseable> toClose;
		synchronized (this) {
			toClose = new ArrayList<>(this.opened);
			this.opened.clear();
		}
		Exception failure = null;
		for (int i = toClose.size() - 1; i >= 0; i--) {
			try {
				toClose.get(i).close();
			}
			catch (Exception ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

}
