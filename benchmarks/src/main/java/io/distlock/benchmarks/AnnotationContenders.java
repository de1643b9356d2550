package io.distlock.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.LockRegistry;
import io.distlock.aop.DistributedLockAdvisor;
import io.distlock.aop.DistributedLockInterceptor;
import io.distlock.aop.LockAttributeSource;
import io.distlock.aop.LockDefaults;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;

/**
 * Scenario 4: one distlock client called two ways with the same semantics (wait 3 s, watchdog
 * lease): a {@code @DistributedLock} method behind the advisor the auto-configuration registers,
 * and the programmatic {@code getLock(key).tryLock(3s)} / {@code unlock()} it stands for.
 */
final class AnnotationContenders {

	static final Duration WAIT = Duration.ofSeconds(3);

	private AnnotationContenders() {
	}

	/** A client's way of running one critical section on a key. */
	interface Path extends AutoCloseable {

		int run(String key);

		@Override
		void close();

	}

	record Named(String name, java.util.function.Supplier<Path> open) {
	}

	static List<Named> all(String host, int port) {
		return List.of(new Named("programmatic", () -> open(host, port, registry -> key -> {
			DistLock lock = registry.getLock(key);
			try {
				if (!lock.tryLock(WAIT)) {
					throw new IllegalStateException("not acquired: " + key);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			try {
				return key.length();
			}
			finally {
				lock.unlock();
			}
		})), new Named("annotation", () -> open(host, port, registry -> {
			DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
			beans.registerSingleton("lockRegistry", registry);
			LockAttributeSource attributes = new LockAttributeSource(beans);
			DistributedLockInterceptor interceptor = new DistributedLockInterceptor(attributes,
					beans.getBeanProvider(LockRegistry.class), () -> new LockDefaults(WAIT, null), beans);
			ProxyFactory proxy = new ProxyFactory(new AnnotatedService());
			proxy.setProxyTargetClass(true);
			proxy.addAdvisor(new DistributedLockAdvisor(attributes, interceptor, 0));
			AnnotatedService service = (AnnotatedService) proxy.getProxy();
			return service::locked;
		})));
	}

	private static Path open(String host, int port, Function<RedisLockRegistry, Function<String, Integer>> path) {
		LettuceConnectionFactory factory = Contenders.connectionFactory(host, port);
		RedisLockRegistry registry = new RedisLockRegistry(factory, "bench", LockEngineOptions.defaults());
		Function<String, Integer> call = path.apply(registry);
		return new Path() {
			public int run(String key) {
				return call.apply(key);
			}

			public void close() {
				registry.close();
				factory.destroy();
			}
		};
	}

}
