package io.distlock.autoconfigure;

import java.util.Arrays;

import javax.sql.DataSource;

import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.util.ClassUtils;

import io.distlock.autoconfigure.DistLockProperties.Backend;
import io.distlock.jdbc.JdbcLockBackend;

/**
 * What each backend needs from the application (a library on the classpath, a bean, a table), and
 * the start-up failure naming the property that chose the backend and what to add when it is
 * missing. The default registry ({@code distlock.backend}) and the named ones
 * ({@code distlock.registries.<name>.backend}) are checked by the same methods, so that they say
 * the same thing.
 */
final class BackendRequirements {

	static final String REDIS_CLASS = "org.springframework.data.redis.connection.RedisConnectionFactory";

	static final String LETTUCE_CLASS = "io.lettuce.core.RedisClient";

	static final String LETTUCE_CUSTOMIZER_CLASS = BootGeneration.LETTUCE_CLIENT_CONFIGURATION_CUSTOMIZER;

	static final String JDBC_CLASS = "org.springframework.jdbc.core.JdbcTemplate";

	static final String CURATOR_CLASS = "org.apache.curator.framework.CuratorFramework";

	static final String REDIS_DEPENDENCY = "org.springframework.boot:spring-boot-starter-data-redis "
			+ "(io.distlock:lock-starter brings it)";

	static final String REDIS_BEAN_ADVICE = "spring-boot-starter-data-redis creates one from spring.data.redis.*; "
			+ "of several, mark the one for locks @Primary";

	static final String LETTUCE_DEPENDENCY = "io.lettuce:lettuce-core (Redlock connects its masters with Lettuce)";

	static final String JDBC_DEPENDENCY = "org.springframework.boot:spring-boot-starter-jdbc and a JDBC driver, "
			+ "with spring.datasource.url set";

	static final String JDBC_BEAN_ADVICE = "spring-boot-starter-jdbc creates one from spring.datasource.*; "
			+ "of several, mark the one for locks @Primary";

	static final String CURATOR_DEPENDENCY = "org.apache.curator:curator-framework";

	private final ListableBeanFactory beanFactory;

	private final ClassLoader classLoader;

	/**
	 * @param beanFactory where the beans are looked for; its bean class loader is where the classes
	 * are (the one bean conditions use too)
	 */
	BackendRequirements(ListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
		ClassLoader beanClassLoader = (beanFactory instanceof ConfigurableBeanFactory configurable)
				? configurable.getBeanClassLoader() : null;
		this.classLoader = (beanClassLoader != null) ? beanClassLoader : BackendRequirements.class.getClassLoader();
	}

	boolean present(String className) {
		return ClassUtils.isPresent(className, this.classLoader);
	}

	/** @return the class named, which {@link #requireClass} found */
	Class<?> load(String className) {
		return ClassUtils.resolveClassName(className, this.classLoader);
	}

	/**
	 * @param property the property that chose the backend, such as {@code distlock.backend}
	 * @param dependency the Maven coordinates that bring the class
	 * @throws InvalidDistLockPropertyException if {@code className} is not on the classpath
	 */
	void requireClass(String property, Object backend, String className, String dependency) {
		requireClass(property, backend, className, dependency,
				"set " + property + " to another backend (redis, jdbc or zookeeper)");
	}

	/**
	 * As {@link #requireClass(String, Object, String, String)}, for a property other than a backend.
	 * @param value the property's value, with any secret masked
	 * @param otherwise the other way out, such as {@code "remove distlock.redlock.nodes"}
	 */
	void requireClass(String property, Object value, String className, String dependency, String otherwise) {
		if (!present(className)) {
			throw new InvalidDistLockPropertyException(property, value,
					"needs " + className + ", which is not on the classpath",
					"Add " + dependency + " to the application's dependencies, or " + otherwise + ".");
		}
	}

	/**
	 * @param advice how an application gets such a bean
	 * @return the application's one bean of {@code type}, or its primary one among several
	 * @throws InvalidDistLockPropertyException if there is none, or several and none primary
	 */
	<T> T requireBean(String property, Object backend, Class<T> type,
			String advice) {
		T found = this.beanFactory.getBeanProvider(type).getIfUnique();
		if (found == null) {
			String[] names = BeanFactoryUtils.beanNamesForTypeIncludingAncestors(this.beanFactory, type);
			String has = (names.length == 0) ? "the application has none"
					: "the application has " + names.length + " and none is @Primary: " + Arrays.toString(names);
			throw new InvalidDistLockPropertyException(property, backend,
					"needs one " + type.getSimpleName() + " bean, and " + has,
					"Add one (" + advice + "), or set " + property + " to another backend (redis, jdbc or zookeeper).");
		}
		return found;
	}

	/** @return the application's DataSource for a table lock; see {@link #requireBean} */
	DataSource requireDataSource(String property) {
		requireClass(property, Backend.JDBC, JDBC_CLASS, JDBC_DEPENDENCY);
		return requireBean(property, Backend.JDBC, DataSource.class, JDBC_BEAN_ADVICE);
	}

	/**
	 * Checks that the lock table and its fencing counter exist when distlock is not to create them:
	 * without them the application would start and every lock call would fail with an SQL error.
	 * @param prefix {@code distlock.jdbc} or {@code distlock.registries.<name>}, whose
	 * {@code table-name} and {@code create-schema} the failure names
	 */
	static void requireSchema(String prefix, JdbcLockBackend backend, String tableName) {
		backend.schemaProblem().ifPresent(problem -> {
			throw new InvalidDistLockPropertyException(prefix + ".table-name", tableName,
					problem + ", and " + prefix + ".create-schema is false",
					"Create the tables (lock-core's " + backend.dialect().schemaResource() + " is the DDL for "
							+ backend.dialect() + ", for Flyway or Liquibase), set " + prefix
							+ ".create-schema=true to have distlock create them at start-up, or set " + prefix
							+ ".table-name to the lock table that exists.");
		});
	}

}
