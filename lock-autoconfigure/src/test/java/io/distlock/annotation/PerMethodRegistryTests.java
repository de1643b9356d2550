package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.jdbc.JdbcLockBackend;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redlock.RedlockLockRegistry;
import io.distlock.testing.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * One application, two backends: the auto-configured Redis registry for most methods, and a table
 * lock declared as a bean that is not a default candidate for the one method that names it. The
 * default registry stays in place, the named method locks in the table only, metrics, the endpoint
 * and health tell the registries apart, and a name that is no registry stops start-up.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PerMethodRegistryTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void close() {
		this.threads.shutdownNow();
		this.contexts.forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void aMethodNamingARegistryLocksThereAndTheDefaultStays() throws Exception {
		ConfigurableApplicationContext context = start(TableLockConfiguration.class);
		assertThat(context.getBean(LockRegistry.class)).as("the auto-configured default did not back off")
			.isInstanceOf(RedisLockRegistry.class);
		LockRegistry table = context.getBean("tableLocks", LockRegistry.class);
		LockRegistry redisLocks = context.getBean(LockRegistry.class);
		Audit audit = context.getBean(Audit.class);

		Future<?> running = this.threads.submit(() -> record(audit, () -> {
			// Asked from other threads while the method runs: only the table has the lock.
			assertThat(otherThread(() -> table.getLock("audit").tryLock())).isFalse();
			assertThat(otherThread(() -> {
				// A wait, not tryLock(): the first call of this registry connects and loads scripts.
				boolean acquired = redisLocks.getLock("audit").tryLock(java.time.Duration.ofSeconds(10));
				if (acquired) {
					redisLocks.getLock("audit").unlock();
				}
				return acquired;
			})).isTrue();
			return null;
		}));
		running.get(30, TimeUnit.SECONDS);
		assertThat(otherThread(() -> {
			boolean acquired = table.getLock("audit").tryLock();
			if (acquired) {
				table.getLock("audit").unlock();
			}
			return acquired;
		})).as("released in the table after the method").isTrue();

		MeterRegistry meters = context.getBean(MeterRegistry.class);
		assertThat(meters.get("distlock.acquire").tags("lock", "Audit.record", "registry", "tableLocks", "outcome", "acquired")
			.timer()
			.count()).isEqualTo(1);
		assertThat(meters.get("distlock.holds.active").tags("registry", "tableLocks").gauge()).isNotNull();
		assertThat(meters.get("distlock.holds.active").tags("registry", "default").gauge()).isNotNull();
		String health = get(context, "/actuator/health/distlock");
		assertThat(health).contains("\"status\":\"UP\"").contains("\"default\"").contains("\"tableLocks\"");
	}

	@Test
	void theEndpointNamesTheRegistryOfEachHold() throws Exception {
		ConfigurableApplicationContext context = start(TableLockConfiguration.class);
		assertThat(context.getBeansOfType(io.distlock.LockRegistryStats.class)).containsKey("tableLocks");
		Audit audit = context.getBean(Audit.class);
		CountDownLatch inside = new CountDownLatch(1);
		CountDownLatch mayLeave = new CountDownLatch(1);
		Future<?> running = this.threads.submit(() -> record(audit, () -> {
			inside.countDown();
			mayLeave.await(20, TimeUnit.SECONDS);
			return null;
		}));
		assertThat(inside.await(20, TimeUnit.SECONDS)).isTrue();
		try {
			assertThat(get(context, "/actuator/distlock")).contains("\"lock\":\"audit\"").contains("\"registry\":\"tableLocks\"");
		}
		finally {
			mayLeave.countDown();
		}
		running.get(30, TimeUnit.SECONDS);
	}

	@Test
	void aRegistryNameThatIsNoRegistryStopsStartUpNamingTheMethod() {
		assertThatThrownBy(() -> start(UnknownRegistryConfiguration.class)).hasStackTraceContaining("Misnamed.record")
			.hasStackTraceContaining("registry 'nope' is not a LockRegistry bean");
	}

	@Test
	void registriesDeclaredInPropertiesAreChosenPerMethodAndTheDefaultStays() throws Exception {
		ConfigurableApplicationContext context = start(AuditOnlyConfiguration.class,
				"distlock.registries.tableLocks.backend=jdbc", "distlock.registries.tableLocks.table-name=audit_locks",
				"distlock.registries.tableLocks.create-schema=true", "distlock.registries.fastLocks.backend=redis",
				"distlock.registries.fastLocks.key-prefix=fast");
		assertThat(context.getBean(LockRegistry.class)).as("the default registry").isInstanceOf(RedisLockRegistry.class);
		LockRegistry table = context.getBean("tableLocks", LockRegistry.class);
		assertThat(table).isInstanceOf(JdbcLockRegistry.class);
		Audit audit = context.getBean(Audit.class);
		Future<?> running = this.threads.submit(() -> record(audit, () -> {
			assertThat(otherThread(() -> table.getLock("audit").tryLock())).as("held in the table").isFalse();
			try (var connection = context.getBean(DataSource.class).getConnection();
					var rows = connection.createStatement().executeQuery("SELECT COUNT(*) FROM audit_locks")) {
				rows.next();
				assertThat(rows.getInt(1)).as("the hold's row in the table the properties named").isEqualTo(1);
			}
			return null;
		}));
		running.get(30, TimeUnit.SECONDS);

		LockRegistry fast = context.getBean("fastLocks", LockRegistry.class);
		assertThat(otherThread(() -> {
			DistLock lock = fast.getLock("x");
			if (!lock.tryLock(java.time.Duration.ofSeconds(10))) {
				return false;
			}
			try {
				return ":1".equals(redis.server().command("EXISTS", "fast:{x}"));
			}
			finally {
				lock.unlock();
			}
		})).as("the Redis registry keeps its keys under its own prefix").isTrue();
		assertThat(get(context, "/actuator/health/distlock")).contains("\"tableLocks\"").contains("\"fastLocks\"");
	}

	@Test
	void aRedisRegistryWithRedlockNodesIsARedlockOverItsOwnMasters() throws Exception {
		List<RedisServerProcess> masters = new ArrayList<>();
		try {
			for (int i = 0; i < 3; i++) {
				masters.add(RedisServerProcess.start());
			}
			// The audit method names the registry 'tableLocks'; here it is a Redlock.
			ConfigurableApplicationContext context = start(AuditOnlyConfiguration.class,
					"distlock.registries.tableLocks.backend=redis", "distlock.registries.tableLocks.key-prefix=critical",
					"distlock.registries.tableLocks.redlock-nodes=" + String.join(",",
							masters.stream().map(RedisServerProcess::uri).toList()),
					// What this test shows does not depend on it; the default 100 ms was missed by all three
					// nodes on a machine loaded by other builds.
					"distlock.redlock.node-timeout=2s");
			assertThat(context.getBean("tableLocks", LockRegistry.class)).isInstanceOf(RedlockLockRegistry.class);
			assertThat(context.getBean(LockRegistry.class)).as("the default registry").isInstanceOf(RedisLockRegistry.class);
			Future<?> running = this.threads.submit(() -> record(context.getBean(Audit.class), () -> {
				long holding = masters.stream().filter(master -> ":1".equals(master.command("EXISTS", "critical:{audit}"))).count();
				assertThat(holding).as("masters holding the method's lock").isGreaterThanOrEqualTo(2);
				assertThat(redis.server().command("EXISTS", "critical:{audit}")).as("the default Redis").isEqualTo(":0");
				return null;
			}));
			running.get(30, TimeUnit.SECONDS);
			assertThat(get(context, "/actuator/health/distlock")).contains("\"tableLocks\"");
		}
		finally {
			this.contexts.forEach(ConfigurableApplicationContext::close);
			this.contexts.clear();
			masters.forEach(RedisServerProcess::close);
		}
		assertThatThrownBy(() -> start(AuditOnlyConfiguration.class, "distlock.registries.tableLocks.backend=redis",
				"distlock.registries.tableLocks.redlock-nodes=redis://a:6379,redis://b:6379"))
			.hasStackTraceContaining("distlock.registries.tableLocks.redlock-nodes")
			.hasStackTraceContaining("at least 3 independent masters");
		assertThatThrownBy(() -> start(AuditOnlyConfiguration.class, "distlock.registries.tableLocks.backend=jdbc",
				"distlock.registries.tableLocks.redlock-nodes=redis://a:6379,redis://b:6379,redis://c:6379"))
			.hasStackTraceContaining("distlock.registries.tableLocks.redlock-nodes")
			.hasStackTraceContaining("does not apply to a JDBC registry");
	}

	@Test
	void aRegistryDeclaredInPropertiesThatCannotBeBuiltStopsStartUpNamingTheProperty() {
		assertThatThrownBy(() -> start(AuditOnlyConfiguration.class, "distlock.registries.tableLocks.table-name=x"))
			.hasStackTraceContaining("distlock.registries.tableLocks.backend")
			.hasStackTraceContaining("must be set");
		assertThatThrownBy(() -> start(AuditOnlyConfiguration.class, "distlock.registries.tableLocks.backend=redis",
				"distlock.registries.tableLocks.table-name=audit_locks"))
			.hasStackTraceContaining("distlock.registries.tableLocks.table-name")
			.hasStackTraceContaining("does not apply to a REDIS registry");
		assertThatThrownBy(() -> start(AuditOnlyConfiguration.class, "distlock.registries.zkLocks.backend=zookeeper",
				"distlock.registries.tableLocks.backend=jdbc", "distlock.registries.tableLocks.create-schema=true"))
			.hasStackTraceContaining("distlock.registries.zkLocks.backend")
			.hasStackTraceContaining("needs one CuratorFramework bean, and the application has none");
		assertThatThrownBy(() -> start(AuditOnlyConfiguration.class, "distlock.registries.default.backend=jdbc",
				"distlock.registries.tableLocks.backend=jdbc"))
			.hasStackTraceContaining("distlock.registries.default")
			.hasStackTraceContaining("the name of the default registry");
	}

	private ConfigurableApplicationContext start(Class<?> configuration, String... properties) {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(LockTestApplication.class, configuration)
			.web(WebApplicationType.SERVLET)
			.properties(properties)
			.properties("spring.data.redis.port=" + redis.server().port(),
					"spring.datasource.url=jdbc:h2:mem:per-method-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1",
					"test.lock-wait=750ms", "distlock.restart-grace=0", "spring.main.banner-mode=off", "server.port=0",
					"management.endpoints.web.exposure.include=distlock,health",
					"management.endpoint.health.show-details=always")
			.run();
		this.contexts.add(context);
		return context;
	}

	private static Void record(Audit audit, Callable<Void> work) throws Exception {
		audit.record(work);
		return null;
	}

	private boolean otherThread(Callable<Boolean> call) throws Exception {
		return this.threads.submit(call).get(20, TimeUnit.SECONDS);
	}

	private static String get(ConfigurableApplicationContext context, String path) throws Exception {
		int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).GET().build(),
					HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as("GET %s: %s", path, response.body()).isEqualTo(200);
		return response.body();
	}

	/** A method that must survive a Redis failover, so it locks in the database. */
	static class Audit {

		@DistributedLock(key = "'audit'", registry = "tableLocks", waitTime = "5s")
		public void record(Callable<Void> work) throws Exception {
			work.call();
		}

	}

	/** A method naming a registry that does not exist. */
	static class Misnamed {

		@DistributedLock(key = "'x'", registry = "nope")
		public void record() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TableLockConfiguration {

		@Bean(defaultCandidate = false, destroyMethod = "close")
		JdbcLockRegistry tableLocks(DataSource dataSource) {
			JdbcLockBackend backend = new JdbcLockBackend(dataSource, "audit_locks");
			backend.createSchema();
			return new JdbcLockRegistry(backend, LockEngineOptions.defaults());
		}

		@Bean
		Audit audit() {
			return new Audit();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class AuditOnlyConfiguration {

		@Bean
		Audit audit() {
			return new Audit();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnknownRegistryConfiguration {

		@Bean
		Misnamed misnamed() {
			return new Misnamed();
		}

	}

}
