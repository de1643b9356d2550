package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.distlock.LockRegistry;
import io.distlock.annotation.DistributedLock;
import io.distlock.jdbc.JdbcLockRegistry;

/**
 * A backend chosen in properties whose library, bean or table is missing stops start-up naming the
 * property and what to add, for the default registry and the named ones alike, instead of starting
 * and failing every locked call with "needs a LockRegistry bean and there is none".
 */
class BackendRequirementsTests {

	private static final FilteredClassLoader WITHOUT_REDIS = new FilteredClassLoader("org.springframework.data.redis",
			"io.lettuce", MovedBootTypes.DATA_REDIS_PACKAGE);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistLockAutoConfiguration.class, DistLockAopAutoConfiguration.class));

	private ApplicationContextRunner withDatabase(String name) {
		return this.runner.withConfiguration(AutoConfigurations.of(MovedBootTypes.DATA_SOURCE_AUTO_CONFIGURATION))
			.withPropertyValues("spring.datasource.url=jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
	}

	@Test
	void zookeeperBackendWithoutCuratorFailsStartUpNamingTheDependency() {
		this.runner.withClassLoader(new FilteredClassLoader("org.apache.curator"))
			.withPropertyValues("distlock.backend=zookeeper", "distlock.zookeeper.connect-string=localhost:2181")
			.run(context -> {
				FailureAnalysis analysis = analysis(context);
				assertThat(analysis.getDescription()).contains("'distlock.backend'", "ZOOKEEPER",
						"org.apache.curator.framework.CuratorFramework", "not on the classpath");
				assertThat(analysis.getAction()).contains("Add org.apache.curator:curator-framework",
						"set distlock.backend to another backend");
			});
	}

	@Test
	void aNamedZooKeeperRegistryWithoutCuratorFailsStartUpTheSameWay() {
		withDatabase("named-zk").withClassLoader(new FilteredClassLoader("org.apache.curator"))
			.withPropertyValues("distlock.backend=jdbc", "distlock.jdbc.create-schema=true",
					"distlock.registries.coordination.backend=zookeeper")
			.run(context -> {
				FailureAnalysis analysis = analysis(context);
				assertThat(analysis.getDescription()).contains("'distlock.registries.coordination.backend'",
						"org.apache.curator.framework.CuratorFramework", "not on the classpath");
				assertThat(analysis.getAction()).contains("Add org.apache.curator:curator-framework");
			});
	}

	@Test
	void jdbcBackendWithoutADataSourceFailsStartUpNamingTheStarterAndTheProperties() {
		this.runner.withPropertyValues("distlock.backend=jdbc").run(context -> {
			FailureAnalysis analysis = analysis(context);
			assertThat(analysis.getDescription()).contains("'distlock.backend'", "JDBC",
					"needs one DataSource bean, and the application has none");
			assertThat(analysis.getAction()).contains("spring-boot-starter-jdbc", "spring.datasource.*");
		});
	}

	@Test
	void jdbcBackendWithoutSpringJdbcFailsStartUpNamingTheStarter() {
		withDatabase("no-spring-jdbc").withClassLoader(new FilteredClassLoader("org.springframework.jdbc"))
			.withPropertyValues("distlock.backend=jdbc")
			.run(context -> {
				FailureAnalysis analysis = analysis(context);
				assertThat(analysis.getDescription()).contains("'distlock.backend'",
						"org.springframework.jdbc.core.JdbcTemplate", "not on the classpath");
				assertThat(analysis.getAction()).contains("Add org.springframework.boot:spring-boot-starter-jdbc");
			});
	}

	@Test
	void aNamedTableLockWithoutADataSourceFailsStartUpNamingItsOwnProperty() {
		this.runner.withUserConfiguration(DistLockAutoConfigurationTests.OwnRegistry.class)
			.withPropertyValues("distlock.registries.tables.backend=jdbc")
			.run(context -> {
				FailureAnalysis analysis = analysis(context);
				assertThat(analysis.getDescription()).contains("'distlock.registries.tables.backend'",
						"needs one DataSource bean, and the application has none");
				assertThat(analysis.getAction()).contains("spring-boot-starter-jdbc");
			});
	}

	@Test
	void aLockTableThatDoesNotExistFailsStartUpWhenDistlockIsNotToCreateIt() {
		withDatabase("no-table").withPropertyValues("distlock.backend=jdbc", "distlock.jdbc.table-name=app_locks")
			.run(context -> {
				FailureAnalysis analysis = analysis(context);
				assertThat(analysis.getDescription()).contains("'distlock.jdbc.table-name'", "'app_locks'",
						"table app_locks does not exist", "distlock.jdbc.create-schema is false")
					.doesNotContain("SQL statement");
				assertThat(analysis.getAction()).contains("io/distlock/jdbc/schema-h2.sql",
						"set distlock.jdbc.create-schema=true", "set distlock.jdbc.table-name to the lock table");
			});
	}

	@Test
	void aLockTableCreatedBeforeStartsWithoutCreateSchema() {
		withDatabase("made-by-flyway").withPropertyValues("distlock.backend=jdbc", "distlock.jdbc.create-schema=true")
			.run(context -> assertThat(context).hasNotFailed());
		withDatabase("made-by-flyway").withPropertyValues("distlock.backend=jdbc")
			.run(context -> assertThat(context).hasNotFailed().hasSingleBean(JdbcLockRegistry.class));
	}

	@Test
	void aFencingCounterThatDoesNotExistFailsStartUp() {
		withDatabase("no-fencing").withPropertyValues("distlock.backend=jdbc", "distlock.jdbc.create-schema=true")
			.run(context -> context.getBean(javax.sql.DataSource.class).getConnection().createStatement()
				.execute("DROP TABLE distributed_locks_fencing"));
		withDatabase("no-fencing").withPropertyValues("distlock.backend=jdbc").run(context -> {
			FailureAnalysis analysis = analysis(context);
			assertThat(analysis.getDescription()).contains("'distlock.jdbc.table-name'",
					"table distributed_locks_fencing (the fencing counter of distributed_locks) does not exist");
		});
	}

	@Test
	void aNamedRegistrysMissingTableIsNamedByItsOwnProperty() {
		withDatabase("named-no-table")
			.withPropertyValues("distlock.backend=jdbc", "distlock.jdbc.create-schema=true",
					"distlock.registries.audit.backend=jdbc", "distlock.registries.audit.table-name=audit_locks",
					"distlock.registries.audit.create-schema=false")
			.run(context -> {
				FailureAnalysis analysis = analysis(context);
				assertThat(analysis.getDescription()).contains("'distlock.registries.audit.table-name'",
						"table audit_locks does not exist", "distlock.registries.audit.create-schema is false");
				assertThat(analysis.getAction()).contains("set distlock.registries.audit.create-schema=true");
			});
	}

	@Test
	void theDefaultRedisBackendWithoutSpringDataRedisNamesTheDependencyNotTheProperties() {
		this.runner.withClassLoader(WITHOUT_REDIS).run(context -> {
			FailureAnalysis analysis = analysis(context);
			assertThat(analysis.getDescription()).contains("'distlock.backend'", "REDIS (the default)",
					"org.springframework.data.redis.connection.RedisConnectionFactory", "not on the classpath");
			assertThat(analysis.getAction()).contains("spring-boot-starter-data-redis", "io.distlock:lock-starter")
				.doesNotContain("spring.data.redis.");
		});
	}

	@Test
	void theDefaultRedisBackendWithoutAConnectionFactoryNamesTheProperties() {
		this.runner.run(context -> {
			FailureAnalysis analysis = analysis(context);
			assertThat(analysis.getDescription()).contains("'distlock.backend'",
					"needs one RedisConnectionFactory bean, and the application has none");
			assertThat(analysis.getAction()).contains("spring.data.redis.*");
		});
	}

	@Test
	void redlockWithoutLettuceNamesTheNodesPropertyWithoutTheirPasswords() {
		// Spring Data Redis's Lettuce support goes with Lettuce: its classes cannot load without it.
		this.runner.withClassLoader(new FilteredClassLoader("io.lettuce", "org.springframework.data.redis.connection.lettuce"))
			.withPropertyValues("distlock.redlock.nodes=redis://:secret@a:6379,redis://b:6379,redis://c:6379")
			.run(context -> {
				FailureAnalysis analysis = analysis(context);
				assertThat(analysis.getDescription()).contains("'distlock.redlock.nodes'", "io.lettuce.core.RedisClient")
					.doesNotContain("secret");
				assertThat(analysis.getAction()).contains("io.lettuce:lettuce-core", "remove distlock.redlock.nodes");
			});
	}

	@Test
	void onlyNamedRegistriesAndNoDefaultBackendIsAChoiceThatStarts() {
		withDatabase("only-named").withClassLoader(WITHOUT_REDIS)
			.withPropertyValues("distlock.registries.tables.backend=jdbc", "distlock.registries.tables.create-schema=true")
			.run(context -> assertThat(context).hasNotFailed().hasBean("tables"));
	}

	@Test
	void aMethodWithoutARegistryWhereThereIsNoDefaultSaysHowToChooseOneAtItsCall() {
		withDatabase("two-named").withClassLoader(WITHOUT_REDIS)
			.withUserConfiguration(Nightly.class)
			.withPropertyValues("distlock.registries.tables.backend=jdbc", "distlock.registries.tables.create-schema=true",
					"distlock.registries.audit.backend=jdbc", "distlock.registries.audit.table-name=audit_locks",
					"distlock.registries.audit.create-schema=true")
			.run(context -> {
				assertThat(context).hasNotFailed();
				assertThatThrownBy(() -> context.getBean(Nightly.class).report()).isInstanceOf(IllegalStateException.class)
					.hasMessageContaining("needs a LockRegistry bean and there is none")
					.hasMessageContaining("@DistributedLock(registry = \"<bean name>\")")
					.hasMessageNotContaining("spring.data.redis");
			});
	}

	@Test
	void aNamedRegistryDoesNotStandInForTheChosenDefaultBackend() {
		withDatabase("named-beside-zk").withClassLoader(new FilteredClassLoader("org.apache.curator"))
			.withPropertyValues("distlock.backend=zookeeper", "distlock.registries.tables.backend=jdbc",
					"distlock.registries.tables.create-schema=true")
			.run(context -> assertThat(analysis(context).getDescription()).contains("'distlock.backend'",
					"org.apache.curator.framework.CuratorFramework"));
	}

	@Test
	void theApplicationsOwnRegistryNeedsNoBackend() {
		this.runner.withClassLoader(WITHOUT_REDIS).withUserConfiguration(DistLockAutoConfigurationTests.OwnRegistry.class)
			.run(context -> assertThat(context).hasNotFailed().hasSingleBean(LockRegistry.class));
	}

	private static FailureAnalysis analysis(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		FailureAnalysis analysis = new InvalidDistLockPropertyFailureAnalyzer().analyze(context.getStartupFailure());
		assertThat(analysis).as("failure analysis of %s", context.getStartupFailure()).isNotNull();
		return analysis;
	}

	public static class Nightly {

		@DistributedLock(key = "'nightly-report'")
		public void report() {
		}

	}

}
