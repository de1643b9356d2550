package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.distlock.DistLock;
import io.distlock.HoldInfo;
import io.distlock.LockBackendException;
import io.distlock.LockListener;
import io.distlock.LockLostException;
import io.distlock.LockRegistry;
import io.distlock.LockWatchdog;
import io.distlock.annotation.DistributedLock;
import io.distlock.annotation.LockContext;
import io.distlock.aop.DistributedLockAdvisor;
import io.distlock.aop.DistributedLockInterceptor;
import io.distlock.aop.LockAttributeSource;
import io.distlock.core.BackendLockRegistry;
import io.distlock.embedded.RedisClusterProcess;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.RedisServerExtension;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redlock.RedlockLockRegistry;

/**
 * What the auto-configuration creates, when it backs off, and how it rejects bad settings.
 */
@ExtendWith(OutputCaptureExtension.class)
class DistLockAutoConfigurationTests {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();



	private ApplicationContextRunner runner() {
		// Each test flushes Redis, which a restart grace would rightly treat as lost data.
		return runnerWithDefaultGrace().withPropertyValues("distlock.restart-grace=0");
	}

	private ApplicationContextRunner runnerWithDefaultGrace() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(MovedBootTypes.DATA_REDIS_AUTO_CONFIGURATION, DistLockAutoConfiguration.class,
					DistLockAopAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.port=" + redis.server().port());
	}

	@Test
	void restartGraceIsTheWatchdogTimeoutUnlessSet() {
		runnerWithDefaultGrace().withPropertyValues("distlock.watchdog.timeout=12s")
			.run(context -> assertThat(context.getBean(RedisLockRegistry.class).options().restartGrace())
				.isEqualTo(Duration.ofSeconds(12)));
		runnerWithDefaultGrace().withPropertyValues("distlock.watchdog.timeout=12s", "distlock.lease-time=40s")
			.run(context -> assertThat(context.getBean(RedisLockRegistry.class).options().restartGrace())
				.as("explicit leases are not renewed: nobody may enter before the longest has ended")
				.isEqualTo(Duration.ofSeconds(40)));
		runnerWithDefaultGrace().withPropertyValues("distlock.restart-grace=5s")
			.run(context -> assertThat(context.getBean(RedisLockRegistry.class).options().restartGrace())
				.isEqualTo(Duration.ofSeconds(5)));
	}

	@Test
	void createsARedisLockRegistryOnTheApplicationsConnectionAndTheAdvisor() {
		runner().run(context -> {
			assertThat(context).hasSingleBean(LockRegistry.class).hasSingleBean(DistributedLockAdvisor.class);
			RedisLockRegistry registry = context.getBean(RedisLockRegistry.class);
			assertThat(registry.options().watchdogTimeout()).isEqualTo(Duration.ofSeconds(30));
			DistLock lock = registry.getLock("boot");
			// A wait: the first connection of a new context may take longer than a zero wait allows.
			assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
			assertThat(redis.server().command("EXISTS", "distlock:{boot}")).isEqualTo(":1");
			lock.unlock();
		});
	}

	@Test
	void worksUnchangedOnARedisClusterConfiguredTheSpringWay() {
		try (RedisClusterProcess cluster = RedisClusterProcess.start(3)) {
			new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(MovedBootTypes.DATA_REDIS_AUTO_CONFIGURATION,
						DistLockAutoConfiguration.class))
				.withPropertyValues("spring.data.redis.cluster.nodes=" + String.join(",", cluster.nodes()),
						"distlock.restart-grace=0")
				.run(context -> {
					DistLock lock = context.getBean(LockRegistry.class).getLock("clustered");
					assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
					long token = lock.getFencingToken();
					lock.unlock();
					assertThat(lock.tryLock()).isTrue();
					assertThat(lock.getFencingToken()).isGreaterThan(token);
					lock.unlock();
				});
		}
	}

	@Test
	void redlockIsUsedWhenIndependentNodesAreListed() {
		List<RedisServerProcess> masters = List.of(RedisServerProcess.start(), RedisServerProcess.start(),
				RedisServerProcess.start());
		try {
			runner().withConfiguration(AutoConfigurations.of(DistLockAopAutoConfiguration.class))
				.withPropertyValues("distlock.redlock.nodes=" + String.join(",", masters.stream().map(RedisServerProcess::uri).toList()),
						"distlock.redlock.node-timeout=2s")
				.run(context -> {
					assertThat(context).hasSingleBean(LockRegistry.class).hasSingleBean(RedlockLockRegistry.class)
						.hasSingleBean(DistributedLockAdvisor.class);
					DistLock lock = context.getBean(LockRegistry.class).getLock("majority");
					assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
					// Redlock answers as soon as a majority agreed; the last node's write may still be in flight.
					assertThat(masters.stream().filter(master -> master.command("EXISTS", "distlock:{majority}").equals(":1")))
						.as("masters holding the lock").hasSizeGreaterThanOrEqualTo(2);
					lock.unlock();
				});
		}
		finally {
			masters.forEach(RedisServerProcess::close);
		}
	}

	@Test
	void redlockNodeConnectionsFollowTheApplicationsLettuceCustomizers() {
		List<RedisServerProcess> masters = List.of(RedisServerProcess.start(), RedisServerProcess.start(),
				RedisServerProcess.start());
		AtomicInteger optionsCustomized = new AtomicInteger();
		try {
			MovedBootTypes.withLettuceCustomizers(runner(), builder -> builder.clientName("audit-locks"),
					options -> optionsCustomized.incrementAndGet())
				.withPropertyValues("distlock.redlock.nodes=" + String.join(",", masters.stream().map(RedisServerProcess::uri).toList()),
						"distlock.redlock.node-timeout=2s")
				.run(context -> {
					DistLock lock = context.getBean(LockRegistry.class).getLock("customized");
					assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
					lock.unlock();
					// Boot's own connection was customized too; each node's was, once.
					assertThat(optionsCustomized.get()).isGreaterThanOrEqualTo(3);
					for (RedisServerProcess master : masters) {
						assertThat(master.query("CLIENT", "LIST")).as("connections of %s", master.uri())
							.contains("name=audit-locks");
					}
				});
		}
		finally {
			masters.forEach(RedisServerProcess::close);
		}
	}

	@Test
	void fewerThanThreeRedlockNodesFailStartUp() {
		assertStartupFailure("distlock.redlock.nodes", "at least 3 independent masters", "distlock.redlock.nodes=redis://a:6379,redis://b:6379");
	}

	@Test
	void duplicateRedlockNodesFailStartUp() {
		assertStartupFailure("distlock.redlock.nodes", "twice", "distlock.redlock.nodes=redis://a:6379,redis://b:6379,redis://A:6379");
	}

	@Test
	void malformedRedlockNodeFailsStartUp() {
		assertStartupFailure("distlock.redlock.nodes", "redis://host:port", "distlock.redlock.nodes=redis://a:6379,redis://b:6379,not a uri");
	}

	@Test
	void anEvenNumberOfRedlockNodesIsWarnedAbout(CapturedOutput output) {
		List<RedisServerProcess> masters = List.of(RedisServerProcess.start(), RedisServerProcess.start(),
				RedisServerProcess.start(), RedisServerProcess.start());
		try {
			runner().withPropertyValues(
					"distlock.redlock.nodes=" + String.join(",", masters.stream().map(RedisServerProcess::uri).toList()))
				.run(context -> {
					assertThat(context).hasNotFailed().hasSingleBean(RedlockLockRegistry.class);
					assertThat(output).contains("an even number").contains("Use an odd number");
				});
		}
		finally {
			masters.forEach(RedisServerProcess::close);
		}
	}

	@Test
	void jdbcBackendLocksInTheApplicationsDatabase() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(MovedBootTypes.DATA_REDIS_AUTO_CONFIGURATION,
					MovedBootTypes.DATA_SOURCE_AUTO_CONFIGURATION,
					DistLockAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:jdbc-backend;DB_CLOSE_DELAY=-1", "distlock.backend=jdbc",
					"distlock.jdbc.table-name=app_locks", "distlock.jdbc.create-schema=true")
			.run(context -> {
				assertThat(context).hasSingleBean(LockRegistry.class).hasSingleBean(io.distlock.jdbc.JdbcLockRegistry.class);
				DistLock lock = context.getBean(LockRegistry.class).getLock("in-table");
				assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
				org.springframework.jdbc.core.JdbcTemplate jdbc = new org.springframework.jdbc.core.JdbcTemplate(
						context.getBean(javax.sql.DataSource.class));
				assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM app_locks WHERE lock_name = 'in-table'", Integer.class))
					.isEqualTo(1);
				lock.unlock();
			});
	}

	@Test
	void jdbcBackendNeedsNoSpringDataRedis() {
		new ApplicationContextRunner()
			.withClassLoader(new FilteredClassLoader("org.springframework.data.redis", "io.lettuce",
					MovedBootTypes.DATA_REDIS_PACKAGE))
			.withConfiguration(AutoConfigurations.of(
					MovedBootTypes.DATA_SOURCE_AUTO_CONFIGURATION,
					DistLockAutoConfiguration.class, DistLockAopAutoConfiguration.class,
					DistLockHealthContributorAutoConfiguration.class))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:no-redis;DB_CLOSE_DELAY=-1", "distlock.backend=jdbc",
					"distlock.jdbc.create-schema=true")
			.run(context -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(io.distlock.jdbc.JdbcLockRegistry.class)
					.hasSingleBean(DistributedLockAdvisor.class)
					.doesNotHaveBean(RedisLockRegistry.class);
				DistLock lock = context.getBean(LockRegistry.class).getLock("no-redis");
				assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
				lock.unlock();
			});
	}

	@Test
	void theAspectIsThreeReplaceableInfrastructureBeansThatProxyClassesByDefault() {
		runner().withUserConfiguration(GreeterConfiguration.class).run(context -> {
			assertThat(context).hasSingleBean(LockAttributeSource.class)
				.hasSingleBean(DistributedLockInterceptor.class)
				.hasSingleBean(DistributedLockAdvisor.class);
			Greeter greeter = context.getBean(Greeter.class);
			assertThat(AopUtils.isCglibProxy(greeter)).isTrue();
			assertThat(Long.parseLong(greeter.greet("ann"))).as("fencing token seen inside the method").isPositive();
		});
	}

	@Test
	void interfaceProxiesAreUsedWhenTheApplicationAsksForThem() {
		runner().withUserConfiguration(GreeterConfiguration.class)
			.withPropertyValues("spring.aop.proxy-target-class=false")
			.run(context -> {
				Greeter greeter = context.getBean(Greeter.class);
				assertThat(AopUtils.isJdkDynamicProxy(greeter)).isTrue();
				assertThat(Long.parseLong(greeter.greet("bob"))).as("fencing token seen inside the method").isPositive();
			});
	}

	interface Greeter {

		String greet(String name);

	}

	static class LockedGreeter implements Greeter {

		@Override
		@DistributedLock(key = "'greet:' + #name")
		public String greet(String name) {
			return String.valueOf(LockContext.fencingToken());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class GreeterConfiguration {

		@Bean
		Greeter greeter() {
			return new LockedGreeter();
		}

	}

	@Test
	void withTheWatchdogOffLocksWithoutALeaseGetTheConfiguredOneAndExpire() {
		runner().withPropertyValues("distlock.watchdog.enabled=false", "distlock.lease-time=1s").run(context -> {
			RedisLockRegistry registry = context.getBean(RedisLockRegistry.class);
			assertThat(registry.options().watchdogEnabled()).isFalse();
			DistLock lock = registry.getLock("no-watchdog");
			lock.lock();
			try {
				assertThat(registry.heldLocks()).singleElement().satisfies(hold -> assertThat(hold.watchdog()).isFalse());
				assertThat(lock.remainingLease()).isLessThanOrEqualTo(Duration.ofSeconds(1));
				// Nobody renews it: another client gets it once the lease has run out.
				DistLock other = context.getBean(RedisLockRegistry.class).getLock("no-watchdog");
				AtomicBoolean taken = new AtomicBoolean();
				Thread rival = new Thread(() -> {
					try {
						taken.set(other.tryLock(Duration.ofSeconds(5), Duration.ofSeconds(1)));
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				});
				rival.start();
				rival.join();
				assertThat(taken).as("taken by another thread after the lease ran out").isTrue();
			}
			finally {
				try {
					lock.unlock();
				}
				catch (LockLostException expected) {
					// The lease ran out, as configured.
				}
			}
		});
	}

	@Test
	void jdbcBackendWithRedlockNodesFailsStartUp() {
		assertStartupFailure("distlock.backend", "a lock lives in one backend", "distlock.backend=jdbc",
				"distlock.redlock.nodes=redis://a:1,redis://b:1,redis://c:1");
	}

	@Test
	void jdbcTableNameMustBeAnIdentifier() {
		assertStartupFailure("distlock.jdbc.table-name", "plain SQL identifier", "distlock.jdbc.table-name=locks; drop table x");
	}

	@Test
	void restartGraceMustNotBeNegative() {
		assertStartupFailure("distlock.restart-grace", "to 0 to turn it off", "distlock.restart-grace=-1s");
	}

	@Test
	void replicaAcksMustNotBeNegative() {
		assertStartupFailure("distlock.redis.replica-acks", "must not be negative", "distlock.redis.replica-acks=-1");
	}

	@Test
	void replicaAckTimeoutMustBePositive() {
		assertStartupFailure("distlock.redis.replica-ack-timeout", "must be positive", "distlock.redis.replica-acks=1",
				"distlock.redis.replica-ack-timeout=0s");
	}

	@Test
	void replicaAcksHaveNoMeaningForRedlock() {
		assertStartupFailure("distlock.redis.replica-acks", "no replicas to wait for", "distlock.redis.replica-acks=1",
				"distlock.redlock.nodes=redis://a:1,redis://b:1,redis://c:1");
	}

	@Test
	void replicaAcksReachTheRegistry() {
		// The test server has no replica: an acquisition that asks for one fails, and says why.
		runner().withPropertyValues("distlock.redis.replica-acks=1", "distlock.redis.replica-ack-timeout=100ms")
			.run(context -> {
				DistLock lock = context.getBean(LockRegistry.class).getLock("acknowledged");
				assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> lock.tryLock(Duration.ofSeconds(1)))
					.withMessageContaining("only 0 of the 1 replica(s) that distlock.redis.replica-acks asks for");
				assertThat(lock.isHeldByCurrentThread()).isFalse();
			});
	}

	@Test
	void propertiesReachTheRegistry() {
		LockListener listener = lost -> {
		};
		runner().withPropertyValues("distlock.key-prefix=orders", "distlock.watchdog.timeout=12s")
			.withBean(LockListener.class, () -> listener)
			.run(context -> {
				RedisLockRegistry registry = context.getBean(RedisLockRegistry.class);
				assertThat(registry.options().watchdogTimeout()).isEqualTo(Duration.ofSeconds(12));
				assertThat(registry.options().listeners()).contains(listener);
				DistLock lock = registry.getLock("prefixed");
				lock.lock();
				assertThat(redis.server().command("EXISTS", "orders:{prefixed}")).isEqualTo(":1");
				lock.unlock();
			});
	}

	@Test
	void everyRegistryRenewsWithTheOneWatchdogBeanAndIsStoppedBeforeIt() {
		runner().withPropertyValues("distlock.watchdog.timeout=1500ms", "distlock.registries.orders.backend=redis",
				"distlock.registries.orders.key-prefix=orders")
			.run(context -> {
				assertThat(context).hasSingleBean(LockWatchdog.class);
				LockWatchdog watchdog = context.getBean(LockWatchdog.class);
				Map<String, BackendLockRegistry> registries = context.getBeansOfType(BackendLockRegistry.class);
				assertThat(registries).hasSize(2);
				String[] watchdogNames = context.getBeanNamesForType(LockWatchdog.class);
				for (Map.Entry<String, BackendLockRegistry> registry : registries.entrySet()) {
					assertThat(registry.getValue().options().watchdog()).isSameAs(watchdog);
					// What Spring stops registries by: each is a dependent of the watchdog, so it stops first.
					assertThat(context.getBeanFactory().getDependentBeans(watchdogNames[0])).contains(registry.getKey());
					DistLock lock = registry.getValue().getLock("renewed");
					lock.lock();
					try {
						await().atMost(Duration.ofSeconds(10)).until(() -> registry.getValue().watchdogRenewals() >= 2);
					}
					finally {
						lock.unlock();
					}
				}
			});
	}

	@Test
	void theApplicationsOwnWatchdogReplacesOursAndRenewsOnItsThreads() {
		AtomicInteger ranOnApplicationThreads = new AtomicInteger();
		ScheduledThreadPoolExecutor applications = new ScheduledThreadPoolExecutor(2) {

			@Override
			protected void beforeExecute(Thread thread, Runnable task) {
				ranOnApplicationThreads.incrementAndGet();
			}

		};
		try {
			runner().withPropertyValues("distlock.watchdog.timeout=1500ms")
				.withBean(LockWatchdog.class, () -> LockWatchdog.on(applications))
				.run(context -> {
					assertThat(context).hasSingleBean(LockWatchdog.class);
					RedisLockRegistry registry = context.getBean(RedisLockRegistry.class);
					assertThat(registry.options().watchdog()).isSameAs(context.getBean(LockWatchdog.class));
					DistLock lock = registry.getLock("renewed-on-application-threads");
					int before = ranOnApplicationThreads.get();
					lock.lock();
					try {
						await().atMost(Duration.ofSeconds(10)).until(() -> registry.watchdogRenewals() >= 2);
					}
					finally {
						lock.unlock();
					}
					assertThat(ranOnApplicationThreads.get()).as("ticks and renewals on the application's scheduler")
						.isGreaterThanOrEqualTo(before + 4);
				});
			assertThat(applications.isShutdown()).as("the application's threads, left to it").isFalse();
		}
		finally {
			applications.shutdownNow();
		}
	}

	@Test
	void backsOffForTheApplicationsOwnRegistry() {
		runner().withUserConfiguration(OwnRegistry.class).run(context -> {
			assertThat(context).hasSingleBean(LockRegistry.class).doesNotHaveBean(RedisLockRegistry.class);
			assertThat(context.getBean(LockRegistry.class)).isSameAs(context.getBean(OwnRegistry.class).registry);
			assertThat(context).hasSingleBean(DistributedLockAdvisor.class);
		});
	}

	@Test
	void disabledCreatesNothing() {
		runner().withPropertyValues("distlock.enabled=false").run(context -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(LockRegistry.class)
				.doesNotHaveBean(DistributedLockAdvisor.class);
		});
	}

	@Test
	void blankKeyPrefixFailsStartUpNamingTheProperty() {
		assertStartupFailure("distlock.key-prefix", "Set distlock.key-prefix", "distlock.key-prefix= ");
	}

	@Test
	void hashTagInKeyPrefixFailsStartUp() {
		assertStartupFailure("distlock.key-prefix", "plain name", "distlock.key-prefix=app{1}");
	}

	@Test
	void negativeWaitTimeFailsStartUpNamingTheProperty() {
		assertStartupFailure("distlock.wait-time", "zero or positive", "distlock.wait-time=-1s");
	}

	@Test
	void zeroLeaseTimeFailsStartUpNamingTheProperty() {
		assertStartupFailure("distlock.lease-time", "must be positive", "distlock.lease-time=0s");
	}

	@Test
	void tinyWatchdogTimeoutFailsStartUpNamingTheProperty() {
		assertStartupFailure("distlock.watchdog.timeout", "at least 30ms", "distlock.watchdog.timeout=5ms");
	}

	@Test
	void aNamedRegistrysKeyPrefixIsCheckedByTheSameRuleAndNamedByItsOwnProperty() {
		assertStartupFailure("distlock.registries.orders.key-prefix", "plain name",
				"distlock.registries.orders.backend=redis", "distlock.registries.orders.key-prefix=orders{1}");
	}

	@Test
	void aRedlockTimingFailsStartUpNamingItsOwnProperty() {
		assertStartupFailure("distlock.redlock.clock-drift-factor", "[0, 0.5)",
				"distlock.redlock.nodes=redis://a:6379,redis://b:6379,redis://c:6379",
				"distlock.redlock.clock-drift-factor=0.7");
	}

	@Test
	void aRegistryTheApplicationBuildsWithAnInvalidSettingFailsStartUpNamingTheSetting() {
		runner().withUserConfiguration(RegistryWithATinyWatchdogTimeout.class).run(context -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = new InvalidLockSettingFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis).isNotNull();
				assertThat(analysis.getDescription()).contains("watchdogTimeout", "at least 30ms");
				assertThat(analysis.getAction()).contains("builder's watchdogTimeout(...)");
			});
	}

	@Test
	void watchdogOffWithoutALeaseFailsStartUp() {
		assertStartupFailure("distlock.lease-time", "re-enable the watchdog", "distlock.watchdog.enabled=false");
	}

	@Test
	void misspeltPropertyFailsStartUpInsteadOfBeingIgnored() {
		runner().withPropertyValues("distlock.wiat-time=2s").run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("distlock.wiat-time");
		});
	}

	@Test
	void malformedDurationFailsStartUpNamingTheProperty() {
		runner().withPropertyValues("distlock.wait-time=soon").run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasStackTraceContaining("Failed to bind properties under 'distlock.wait-time'");
		});
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
	static class RegistryWithATinyWatchdogTimeout {

		@Bean
		RedisLockRegistry ordersLocks(RedisConnectionFactory connectionFactory) {
			return RedisLockRegistry.builder(connectionFactory).options(options -> options.watchdogTimeout(Duration.ofMillis(5))).build();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnRegistry {

		final LockRegistry registry = new LockRegistry() {
			@Override
			public DistLock getLock(String name) {
				throw new UnsupportedOperationException();
			}

			@Override
			public java.util.List<HoldInfo> heldLocks() {
				return java.util.List.of();
			}
		};

		@Bean
		LockRegistry ownRegistry() {
			return this.registry;
		}

	}

}
