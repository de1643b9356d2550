package io.distlock.docs;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import io.distlock.autoconfigure.RedlockConnectionDetails;
import io.distlock.autoconfigure.testcontainers.RedlockContainers;

/**
 * The code of {@code docs/testing.md}, compiled; see {@link DocsSnippetsTests}. Never run: the test
 * class below is nested, and surefire leaves nested classes out.
 *
 * <p>The only snippet class with Spring Boot imports: a test of an application is written with
 * {@code @SpringBootTest} and {@code @ServiceConnection}, which have the same packages on Spring Boot
 * 3.5 and 4 (lock-autoconfigure's own {@code RedlockOnTestcontainersTests} compiles on both).
 */
@SuppressWarnings("unused")
class ApplicationTestSnippets {

	record Order(String id) {
	}

	interface OrderService {

		void ship(Order order);

	}

	// tag::testcontainers[]
	@Testcontainers
	@SpringBootTest(properties = "distlock.restart-grace=0s")   // this Redis starts empty
	class OrderServiceTests {

		@Container
		@ServiceConnection(name = "redis")
		static GenericContainer<?> redis = new GenericContainer<>("redis:7").withExposedPorts(6379);

		@Autowired
		OrderService orders;

		@Test
		void shipsAnOrderUnderItsLock() {
			orders.ship(new Order("42"));
			// ...
		}

	}
	// end::testcontainers[]

	static class RedlockMasters {

		private final GenericContainer<?> master1 = new GenericContainer<>("redis:7").withExposedPorts(6379);

		private final GenericContainer<?> master2 = new GenericContainer<>("redis:7").withExposedPorts(6379);

		private final GenericContainer<?> master3 = new GenericContainer<>("redis:7").withExposedPorts(6379);

		// tag::redlock-connection-details[]
		@Bean
		RedlockConnectionDetails redlockMasters() {   // io.distlock.autoconfigure
			return RedlockContainers.connectionDetails(master1, master2, master3);
		}
		// end::redlock-connection-details[]

	}

}
