package io.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.HoldInfo;
import io.distlock.LockRegistry;
import io.distlock.annotation.DistributedLock;
import io.distlock.annotation.LockContext;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.testing.ClosedAfterEach;
import io.distlock.testing.RedisServerExtension;

/**
 * Edge cases of the interceptor that the Boot-level annotation tests cannot reach, against real
 * {@link RedisLockRegistry registries} on a real Redis.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DistributedLockInterceptorTest {

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	@ParameterizedTest
	@MethodSource("neitherBackendFailureNorInterrupt")
	void locksAlreadyTakenAreReleasedWhenALaterAcquisitionThrows(Throwable thrown) {
		RedisLockRegistry live = registry();
		// account:1 (sorted first) is taken for real; then tryLock of account:2 throws what is neither a
		// LockBackendException nor an interrupt, as a closed registry or a user's LockRegistry bean may.
		Transfers target = new Transfers();
		Transfers transfers = proxy(target, throwingFor(live, "account:2", "tryLock", thrown));

		assertThatThrownBy(() -> transfers.transfer("2", "1")).isSameAs(thrown);

		assertThat(target.runs).hasValue(0);
		assertThatLockIsFree(live, "account:1");
	}

	static List<Throwable> neitherBackendFailureNorInterrupt() {
		return List.of(new IllegalStateException("Lock registry is closed; cannot acquire lock 'account:2'"),
				new NoClassDefFoundError("io/lettuce/core/SomeMissingClass"));
	}

	/**
	 * Tokens are asked for only when the method asks (a backend may issue them on request): one that
	 * cannot be had reaches the method, and every lock is released after it all the same.
	 */
	@Test
	void allLocksAreReleasedWhenATokenTheMethodAsksForCannotBeHad() {
		RedisLockRegistry live = registry();
		// Both locks are taken for real; asking account:2 for its fencing token then finds no hold.
		IllegalMonitorStateException gone = new IllegalMonitorStateException("thread 'main' does not hold lock 'account:2'");
		Transfers target = new Transfers();
		Transfers transfers = proxy(target, throwingFor(live, "account:2", "getFencingToken", gone));

		assertThat(transfers.transfer("1", "2")).as("no token asked for, none fetched").isEqualTo(1);
		assertThatThrownBy(() -> transfers.transferFenced("1", "2")).isSameAs(gone);

		assertThat(target.runs).hasValue(2);
		assertThatLockIsFree(live, "account:1");
		assertThatLockIsFree(live, "account:2");
	}

	private void assertThatLockIsFree(RedisLockRegistry registry, String name) {
		assertThat(registry.heldLocks()).isEmpty();
		DistLock sameLockElsewhere = registry().getLock(name);
		assertThat(sameLockElsewhere.tryLock()).as("another client can take '%s' at once", name).isTrue();
		sameLockElsewhere.unlock();
	}

	/**
	 * A registry whose handles of lock {@code name} throw {@code thrown} from {@code methodName} and are
	 * otherwise the real registry's.
	 */
	private static LockRegistry throwingFor(RedisLockRegistry real, String name, String methodName, Throwable thrown) {
		return new LockRegistry() {

			@Override
			public DistLock getLock(String lockName) {
				DistLock lock = real.getLock(lockName);
				return lockName.equals(name) ? throwing(lock, methodName, thrown) : lock;
			}

			@Override
			public List<HoldInfo> heldLocks() {
				return real.heldLocks();
			}

			@Override
			public boolean offersFencingTokens() {
				return real.offersFencingTokens();
			}

		};
	}

	private static DistLock throwing(DistLock lock, String methodName, Throwable thrown) {
		return (DistLock) Proxy.newProxyInstance(DistLock.class.getClassLoader(), new Class<?>[] { DistLock.class },
				(proxy, method, args) -> {
					if (method.getName().equals(methodName)) {
						throw thrown;
					}
					try {
						return method.invoke(lock, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	private RedisLockRegistry registry() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.server().host(), redis.server().port()));
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		RedisLockRegistry registry = new RedisLockRegistry(factory, "distlock",
				LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(30)).build());
		this.opened.add(registry);
		return registry;
	}

	private static <T> T proxy(T target, LockRegistry registry) {
		StaticListableBeanFactory beans = new StaticListableBeanFactory(Map.of("lockRegistry", registry));
		LockAttributeSource attributes = new LockAttributeSource(beans);
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(attributes,
				beans.getBeanProvider(LockRegistry.class), () -> new LockDefaults(Duration.ofSeconds(10), null), beans);
		ProxyFactory proxies = new ProxyFactory(target);
		proxies.setProxyTargetClass(true);
		proxies.addAdvisor(new DistributedLockAdvisor(attributes, interceptor, 0));
		@SuppressWarnings("unchecked")
		T proxy = (T) proxies.getProxy();
		return proxy;
	}

	/** Needs both accounts' locks. */
	static class Transfers {

		final AtomicInteger runs = new AtomicInteger();

		@DistributedLock(key = { "'account:' + #from", "'account:' + #to" })
		public int transfer(String from, String to) {
			return this.runs.incrementAndGet();
		}

		@DistributedLock(key = { "'account:' + #from", "'account:' + #to" })
		public long transferFenced(String from, String to) {
			this.runs.incrementAndGet();
			return LockContext.fencingToken("account:" + from) + LockContext.fencingToken("account:" + to);
		}

	}

}
