package io.distlock.autoconfigure;

import java.util.List;

import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;

/**
 * Redlock's masters as a connection-details bean, which replaces {@code distlock.redlock.nodes} (as
 * Spring Boot's connection details replace {@code spring.data.redis.*}); timeouts and TLS still come
 * from {@code distlock.redlock.*}. For masters in Testcontainers,
 * {@link io.distlock.autoconfigure.testcontainers.RedlockContainers#connectionDetails} makes one.
 */
@FunctionalInterface
public interface RedlockConnectionDetails extends ConnectionDetails {

	/**
	 * @return the masters, each written as an entry of {@code distlock.redlock.nodes}:
	 * {@code redis://[user:password@]host:port} or {@code rediss://...}
	 */
	List<String> nodes();

}
