package io.distlock.autoconfigure.testcontainers;

import java.util.Arrays;
import java.util.List;

import org.testcontainers.containers.Container;

import io.distlock.autoconfigure.RedlockConnectionDetails;

/**
 * Redlock on Redis containers, in tests written the Spring Boot way. {@code @ServiceConnection}
 * registers one connection-details bean per type, so several containers cannot each add a master;
 * declare the masters in one bean instead:
 *
 * <pre>{@code
 * @Bean
 * RedlockConnectionDetails redlockMasters() {
 *     return RedlockContainers.connectionDetails(master1, master2, master3);
 * }
 * }</pre>
 */
public final class RedlockContainers {

	private static final int REDIS_PORT = 6379;

	private RedlockContainers() {
	}

	/**
	 * @param masters Redis containers, each listening on 6379 inside; read once they have started
	 * @return their connection details, in the order given
	 */
	public static RedlockConnectionDetails connectionDetails(Container<?>... masters) {
		List<Container<?>> nodes = Arrays.asList(masters.clone());
		return () -> nodes.stream()
			.map(node -> "redis://" + node.getHost() + ":" + node.getMappedPort(REDIS_PORT))
			.toList();
	}

}
