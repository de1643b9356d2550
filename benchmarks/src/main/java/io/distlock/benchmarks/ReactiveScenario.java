package io.distlock.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import org.HdrHistogram.Histogram;
import org.redisson.Redisson;
import org.redisson.api.RLockReactive;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.LockRegistry;
import io.distlock.annotation.DistributedLock;
import io.distlock.aop.DistributedLockAdvisor;
import io.distlock.aop.DistributedLockInterceptor;
import io.distlock.aop.LockAttributeSource;
import io.distlock.aop.LockDefaults;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Scenario 6 (opt-in, {@code reactive}): 256 concurrent reactive subscriptions on one key over 4
 * clients, each taking the lock, running a short critical section and releasing, again and again:
 * a {@code @DistributedLock} method returning a {@link Mono} against Redisson's
 * {@link RLockReactive}. Reports acquisitions per second, hand-off latency (one holder's exit to the
 * next holder's entry) and how many threads each library added while it ran.
 */
final class ReactiveScenario {

	static final int CLIENTS = 4;

	static final int SUBSCRIPTIONS = 256;

	private ReactiveScenario() {
	}

	/** One library's figures. */
	record Result(double acquisitionsPerSecond, Histogram handoff, int threadsAdded) {
	}

	/** The critical section, shared by both libraries; counts overlaps, which must stay 0. */
	static final class Section {

		private final AtomicInteger inside = new AtomicInteger();

		private final AtomicLong lastExit = new AtomicLong();

		final AtomicLong overlaps = new AtomicLong();

		final AtomicLong entries = new AtomicLong();

		final Histogram handoff = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);

		volatile boolean measuring;

		Integer run() {
			long now = System.nanoTime();
			if (this.inside.incrementAndGet() > 1) {
				this.overlaps.incrementAndGet();
			}
			long last = this.lastExit.get();
			if (this.measuring) {
				this.entries.incrementAndGet();
				if (last != 0) {
					synchronized (this.handoff) {
						this.handoff.recordValue(Math.max(0, now - last));
					}
				}
			}
			this.inside.decrementAndGet();
			this.lastExit.set(System.nanoTime());
			return 1;
		}

	}

	/** A locked reactive method, as an application would write it. */
	public static class LockedService {

		private final Section section;

		public LockedService(Section section) {
			this.section = section;
		}

		@DistributedLock(key = "'reactive'", waitTime = "60s")
		public Mono<Integer> locked() {
			return Mono.fromCallable(this.section::run);
		}

	}

	static Result distlock(String host, int port, Duration warmup, Duration duration) throws Exception {
		Section section = new Section();
		List<AutoCloseable> opened = new ArrayList<>();
		List<LockedService> services = new ArrayList<>();
		for (int i = 0; i < CLIENTS; i++) {
			LettuceConnectionFactory factory = Contenders.connectionFactory(host, port);
			RedisLockRegistry registry = new RedisLockRegistry(factory, "bench", LockEngineOptions.defaults());
			opened.add(factory::destroy);
			opened.add(registry);
			DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
			beans.registerSingleton("lockRegistry", registry);
			LockAttributeSource attributes = new LockAttributeSource(beans);
			DistributedLockInterceptor interceptor = new DistributedLockInterceptor(attributes,
					beans.getBeanProvider(LockRegistry.class), () -> new LockDefaults(Duration.ofSeconds(60), null), beans);
			ProxyFactory proxy = new ProxyFactory(new LockedService(section));
			proxy.setProxyTargetClass(true);
			proxy.addAdvisor(new DistributedLockAdvisor(attributes, interceptor, 0));
			services.add((LockedService) proxy.getProxy());
		}
		try {
			return measure(section, warmup, duration, i -> services.get(i % CLIENTS).locked());
		}
		finally {
			for (int i = opened.size() - 1; i >= 0; i--) {
				opened.get(i).close();
			}
		}
	}

	static Result redisson(String host, int port, Duration warmup, Duration duration) throws Exception {
		Section section = new Section();
		List<RedissonReactiveClient> clients = new ArrayList<>();
		for (int i = 0; i < CLIENTS; i++) {
			Config config = new Config();
			config.useSingleServer().setAddress("redis://" + host + ":" + port);
			clients.add(Redisson.create(config).reactive());
		}
		AtomicLong owners = new AtomicLong();
		try {
			return measure(section, warmup, duration, i -> {
				RLockReactive lock = clients.get(i % CLIENTS).getLock("redisson:reactive");
				// RLockReactive names its holder by a number the caller picks: one per acquisition.
				long owner = owners.incrementAndGet();
				return lock.lock(owner).then(Mono.fromCallable(section::run)).flatMap(value -> lock.unlock(owner).thenReturn(value));
			});
		}
		finally {
			clients.forEach(RedissonReactiveClient::shutdown);
		}
	}

	private static Result measure(Section section, Duration warmup, Duration duration,
			Function<Integer, Mono<Integer>> acquisition) {
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		int before = threads.getThreadCount();
		threads.resetPeakThreadCount();
		long warmEnd = System.nanoTime() + warmup.toNanos();
		long end = warmEnd + duration.toNanos();
		Flux.range(0, SUBSCRIPTIONS).flatMap(i -> Mono.defer(() -> {
			section.measuring = System.nanoTime() > warmEnd;
			return acquisition.apply(i);
		}).repeat(() -> System.nanoTime() < end), SUBSCRIPTIONS).blockLast(duration.plus(warmup).plusSeconds(120));
		if (section.overlaps.get() > 0) {
			throw new IllegalStateException(section.overlaps.get() + " overlapping critical sections: the lock failed");
		}
		return new Result(section.entries.get() / (duration.toNanos() / 1e9), section.handoff,
				threads.getPeakThreadCount() - before);
	}

}
