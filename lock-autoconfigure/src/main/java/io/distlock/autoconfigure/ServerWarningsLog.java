package io.distlock.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;

import io.distlock.LockRegistryStats;

/**
 * Once the application has started, asks every lock registry's servers whether they are set up in a
 * way that can lose holds while they run (a Redis {@code maxmemory-policy} that may evict lock keys)
 * and logs a WARN naming the server, the setting and the fix. Such a setting starts fine and fails
 * only when the memory fills up, long after anyone looked.
 *
 * <p>Asked on a thread of its own: a server that is slow or down at start-up must not hold the
 * application's start-up back (the health endpoint reports it), and a server that cannot be asked
 * (an ACL without {@code INFO}) is only noted at DEBUG.
 */
class ServerWarningsLog implements ApplicationListener<ContextRefreshedEvent> {

	private static final Logger log = LoggerFactory.getLogger(ServerWarningsLog.class);

	private final LockRegistries registries;

	private final AtomicBoolean asked = new AtomicBoolean();

	ServerWarningsLog(LockRegistries registries) {
		this.registries = registries;
	}

	@Override
	public void onApplicationEvent(ContextRefreshedEvent event) {
		if (this.asked.compareAndSet(false, true)) {
			Map<String, LockRegistryStats> all = this.registries.all();
			// Named after its context: a test, or an operator reading a thread dump, can tell whose it is.
			Thread check = new Thread(() -> all.forEach(ServerWarningsLog::ask),
					threadName(event.getApplicationContext().getId()));
			check.setDaemon(true);
			check.start();
		}
	}

	/**
	 * @param contextId the application context's id
	 * @return the name of the thread that asks the servers of that context's registries
	 */
	static String threadName(String contextId) {
		return "distlock-server-check (" + contextId + ")";
	}

	private static void ask(String registry, LockRegistryStats stats) {
		try {
			List<String> warnings = stats.serverWarnings();
			warnings.forEach(warning -> log.warn("distlock registry '{}': {}", registry, warning));
		}
		catch (RuntimeException ex) {
			log.debug("distlock registry '{}': could not ask its servers how they are set up", registry, ex);
		}
	}

}
