package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.annotation.DistributedLock;
import io.distlock.annotation.LockContext;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.zookeeper.ZooKeeperLockRegistry;

/**
 * {@code distlock.backend=zookeeper} against a real ZooKeeper server (curator-test's
 * {@link TestingServer}, in this JVM, on a free port).
 */
class ZooKeeperAutoConfigurationTests {

	private static TestingServer server;

	private static CuratorFramework observer;

	@BeforeAll
	static void startServer() throws Exception {
		// Port 0: the server binds a free port itself, which no other process can take first.
		server = new TestingServer(0, true);
		observer = curator(null);
	}

	@AfterAll
	static void stopServer() throws Exception {
		observer.close();
		server.close();
	}

	private static CuratorFramework curator(String namespace) throws InterruptedException {
		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(server.getConnectString())
			.namespace(namespace)
			.retryPolicy(new RetryOneTime(100))
			.build();
		client.start();
		assertThat(client.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
		return client;
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DistLockAutoConfiguration.class, DistLockAopAutoConfiguration.class))
			.withPropertyValues("distlock.backend=zookeeper");
	}

	@Test
	void zookeeperBackendBuildsItsRegistryFromTheProperties() throws Exception {
		runner()
			.withPropertyValues("distlock.zookeeper.connect-string=" + server.getConnectString(),
					"distlock.zookeeper.base-path=/apps/locks", "distlock.zookeeper.session-timeout=10s",
					"distlock.zookeeper.connection-timeout=2s")
			.run(context -> {
				assertThat(context).hasNotFailed().hasSingleBean(ZooKeeperLockRegistry.class)
					.doesNotHaveBean(RedisLockRegistry.class);
				DistLock lock = context.getBean(LockRegistry.class).getLock("from-properties");
				assertThat(lock.tryLock(Duration.ofSeconds(10))).isTrue();
				assertThat(lock.getFencingToken()).isEqualTo(observer.checkExists().forPath("/apps/locks/from-properties").getCzxid());
				assertThat(((io.distlock.LockRegistryStats) context.getBean(LockRegistry.class)).backendHealth().details())
					.containsEntry("ensemble", server.getConnectString());
			});
		// Closing the context closed the client it made, ending its session: the lock is free.
		assertThat(observer.checkExists().forPath("/apps/locks/from-properties")).isNull();
	}

	/** The holder is the first node of the lock's line, under a container at the lock node's path. */
	@Test
	void theLineProtocolIsChosenByAProperty() throws Exception {
		runner()
			.withPropertyValues("distlock.zookeeper.connect-string=" + server.getConnectString(),
					"distlock.zookeeper.base-path=/apps/line", "distlock.zookeeper.exclusive-protocol=line")
			.run(context -> {
				assertThat(context).hasNotFailed();
				DistLock lock = context.getBean(LockRegistry.class).getLock("in-line");
				assertThat(lock.tryLock(Duration.ofSeconds(10))).isTrue();
				org.apache.zookeeper.data.Stat parent = observer.checkExists().forPath("/apps/line/in-line");
				assertThat(parent.getEphemeralOwner()).as("a container, not a lock node").isZero();
				List<String> line = observer.getChildren().forPath("/apps/line/in-line");
				assertThat(line).hasSize(1);
				assertThat(lock.getFencingToken())
					.isEqualTo(observer.checkExists().forPath("/apps/line/in-line/" + line.get(0)).getCzxid());
				lock.unlock();
				assertThat(observer.getChildren().forPath("/apps/line/in-line")).isEmpty();
			});
	}

	@Test
	void anUnknownExclusiveProtocolFailsStartUpNamingTheProperty() {
		runner()
			.withPropertyValues("distlock.zookeeper.connect-string=" + server.getConnectString(),
					"distlock.zookeeper.exclusive-protocol=queue")
			.run(context -> {
				assertThat(context).hasFailed();
				// Spring Boot's own binding failure, which its failure analysis shows with the valid values.
				assertThat(context.getStartupFailure()).hasStackTraceContaining("distlock.zookeeper.exclusive-protocol")
					.rootCause()
					.hasMessageContaining("queue");
			});
	}

	@Test
	void theApplicationsOwnCuratorClientIsUsedAndNotClosed() {
		runner().withUserConfiguration(OwnCurator.class)
			.withPropertyValues("distlock.zookeeper.connect-string=unused:1")
			.run(context -> {
				assertThat(context).hasNotFailed().hasSingleBean(ZooKeeperLockRegistry.class);
				DistLock lock = context.getBean(LockRegistry.class).getLock("own-client");
				assertThat(lock.tryLock(Duration.ofSeconds(10))).isTrue();
				// Under the application client's namespace: the registry went through that client.
				assertThat(observer.checkExists().forPath("/own-app/distlock/own-client")).isNotNull();
				lock.unlock();
			});
		assertThat(OwnCurator.client.getState()).isEqualTo(CuratorFrameworkState.STARTED);
		OwnCurator.client.close();
	}

	@Test
	void aMissingConnectStringFailsStartUpNamingTheProperty() {
		assertStartupFailure("distlock.zookeeper.connect-string", "CuratorFramework bean");
	}

	@Test
	void aRelativeBasePathFailsStartUpNamingTheProperty() {
		assertStartupFailure("distlock.zookeeper.base-path", "absolute znode path",
				"distlock.zookeeper.connect-string=" + server.getConnectString(), "distlock.zookeeper.base-path=locks/");
	}

	@Test
	void annotatedMethodsOfTwoInstancesNeverOverlapOnZooKeeper() {
		ApplicationContextRunner instance = runner().withUserConfiguration(CounterConfiguration.class)
			.withPropertyValues("distlock.zookeeper.connect-string=" + server.getConnectString());
		instance.run(first -> instance.run(second -> {
			ExecutorService threads = Executors.newFixedThreadPool(8);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<?>> workers = new ArrayList<>();
				for (int t = 0; t < 8; t++) {
					Counter counter = ((t % 2 == 0) ? first : second).getBean(Counter.class);
					workers.add(threads.submit(() -> {
						start.await();
						for (int i = 0; i < 25; i++) {
							counter.increment();
						}
						return null;
					}));
				}
				start.countDown();
				for (Future<?> worker : workers) {
					worker.get(60, TimeUnit.SECONDS);
				}
			}
			finally {
				threads.shutdownNow();
			}
			assertThat(Counter.overlaps).isZero();
			assertThat(Counter.value).isEqualTo(200);
			assertThat(Counter.lastToken).isPositive();
		}));
	}

	private void assertStartupFailure(String expectedProperty, String expectedText, String... properties) {
		runner().withPropertyValues(properties).run(context -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			FailureAnalysis analysis = new InvalidDistLockPropertyFailureAnalyzer().analyze(failure);
			assertThat(analysis).as("failure analysis of %s", failure).isNotNull();
			assertThat(analysis.getDescription()).contains(expectedProperty);
			assertThat(analysis.getDescription() + " " + analysis.getAction()).contains(expectedText);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnCurator {

		static CuratorFramework client;

		// No destroy method: the test checks that distlock does not close it either.
		@Bean(destroyMethod = "")
		CuratorFramework curatorFramework() throws InterruptedException {
			client = curator("own-app");
			return client;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CounterConfiguration {

		@Bean
		Counter counter() {
			return new Counter();
		}

	}

	/** A read-modify-write with a pause between the two: it loses updates unless locked. */
	static class Counter {

		static volatile long value;

		static volatile int overlaps;

		static volatile int inside;

		static volatile long lastToken;

		@DistributedLock(key = "'zk-counter'", waitTime = "30s")
		public void increment() throws InterruptedException {
			if (++inside > 1) {
				overlaps++;
			}
			long token = LockContext.fencingToken();
			if (token <= lastToken) {
				overlaps++;
			}
			lastToken = token;
			long read = value;
			Thread.sleep(1);
			value = read + 1;
			inside--;
		}

	}

}
