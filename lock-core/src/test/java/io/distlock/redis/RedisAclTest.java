package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.HoldKind;
import io.distlock.core.AcquireRequest;
import io.distlock.core.LockBackend.Acquisition;
import io.distlock.core.LockBackend.Release;
import io.distlock.core.LockEngineOptions;
import io.distlock.core.ReleaseRequest;
import io.distlock.testing.ClosedAfterEach;
import io.distlock.testing.RedisServerExtension;

/**
 * The least-privilege Redis ACL that docs/redis.md documents is enough for everything distlock does:
 * locking, waiting through pub/sub, hand-offs, renewals, fencing, release markers and the health check.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisAclTest {

	/** The ACL of docs/redis.md, word for word after the user name. */
	static final String README_ACL = "on >s3cret-for-locks ~distlock:* &distlock:* +@scripting +@pubsub +@hash +@list "
			+ "+get +mget +set +pexpire +pttl +exists +del +rename +time +ping +hello +auth +client +select +info +lastsave";

	/**
	 * The clients' watchdog lease. What is tested here is which commands the ACL allows, not leases;
	 * but a lease bounds a renewal's wait (what is left of it) and an unlock's (that plus a second).
	 * With 1 s, a machine under heavy load lost the hold whose renewal the test waits for, and an
	 * unlock failed ("Redis did not answer within 1999 ms").
	 */
	private static final Duration WATCHDOG = Duration.ofSeconds(10);

	@RegisterExtension
	static final RedisServerExtension redisServer = new RedisServerExtension();

	@RegisterExtension
	final ClosedAfterEach opened = new ClosedAfterEach();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void tearDown() throws Exception {
		this.threads.shutdownNow();
	}

	/** Gives user {@code locks} the rules of {@link #README_ACL}. */
	private static void setUpDocumentedUser() {
		setUpUser(README_ACL, false);
	}

	/**
	 * Sets user {@code locks} up anew with {@link #README_ACL} less {@code rule}: the list as it was
	 * before that rule joined it.
	 */
	private static void setUpUserWithout(String rule) {
		assertThat(README_ACL).contains(" " + rule);
		setUpUser(README_ACL.replace(" " + rule, ""), true);
	}

	private static void setUpUser(String rules, boolean reset) {
		List<String> acl = new ArrayList<>(List.of("ACL", "SETUSER", "locks"));
		if (reset) {
			acl.add("reset");
		}
		acl.addAll(List.of(rules.split(" ")));
		assertThat(redisServer.server().command(acl.toArray(String[]::new))).isEqualTo("+OK");
	}

	@Test
	void theDocumentedAclIsEnoughForContendedLocking() throws Exception {
		setUpDocumentedUser();

		List<RedisLockRegistry> clients = List.of(client(), client());
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			DistLock lock = clients.get(t % 2).getLock("acl");
			workers.add(this.threads.submit(() -> {
				long lastToken = 0;
				for (int i = 0; i < 25; i++) {
					assertThat(lock.tryLock(Duration.ofSeconds(10))).isTrue();
					try {
						if (inside.incrementAndGet() > 1) {
							overlaps.incrementAndGet();
						}
						lastToken = Math.max(lastToken, lock.getFencingToken());
						Thread.sleep(1);
						inside.decrementAndGet();
					}
					finally {
						lock.unlock();
					}
				}
				return lastToken;
			}));
		}
		for (Future<?> worker : workers) {
			worker.get(40, TimeUnit.SECONDS);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(clients.get(0).backendHealth().up()).isTrue();
		// The watchdog's renewals pass too.
		DistLock held = clients.get(0).getLock("acl-renewed");
		held.lock();
		long renewals = clients.get(0).watchdogRenewals();
		// The first renewal comes a third of a lease in.
		org.awaitility.Awaitility.await().atMost(WATCHDOG.multipliedBy(3))
			.until(() -> clients.get(0).watchdogRenewals() > renewals);
		held.unlock();
	}

	/**
	 * With a wrong password Lettuce at times reports the connection Redis closed ("Connection closed
	 * prematurely") instead of the WRONGPASS that closed it; the explanation a lock call's failure
	 * carries still names the credentials (CI once saw the bare "closed" message, and once, in the health
	 * details, "RedisHandshakeHandler not registered").
	 */
	@Test
	void aClosedConnectionWithoutCauseIsExplainedByWhatANewConnectionIsTold() throws Exception {
		setUpDocumentedUser();
		RedisLockBackend backend = new RedisLockBackend(factory("not-the-password"), "distlock");

		String explained = backend.explain(new RedisConnectionFailureException("Connection closed prematurely"));

		assertThat(explained).contains("rejected the credentials (WRONGPASS)").doesNotContain("not-the-password");
		// The same refusal when the close beat Lettuce's connect listener (seen once in CI, in health).
		assertThat(backend.explain(new RedisConnectionFailureException("Unable to connect to Redis",
				new IllegalStateException("RedisHandshakeHandler not registered"))))
			.contains("rejected the credentials (WRONGPASS)");
		assertThat(new RedisLockBackend(factory("s3cret-for-locks"), "distlock")
			.explain(new RedisConnectionFailureException("Connection closed prematurely")))
			.as("with the right password the failure is reported as it was")
			.contains("failed: Connection closed prematurely");
	}

	private LettuceConnectionFactory factory(String password) {
		RedisStandaloneConfiguration server = new RedisStandaloneConfiguration(redisServer.server().host(),
				redisServer.server().port());
		server.setUsername("locks");
		server.setPassword(RedisPassword.of(password));
		LettuceConnectionFactory factory = new LettuceConnectionFactory(server,
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
		factory.afterPropertiesSet();
		factory.start();
		this.opened.add(factory::destroy);
		return factory;
	}

	/**
	 * The restart grace's check runs LASTSAVE and INFO: with the documented ACL a server up longer than
	 * the grace admits its first lock at once (a user refused them would serve a whole grace, counted
	 * from the missing counter).
	 */
	@Test
	void theDocumentedAclLetsTheRestartGraceSeeHowLongTheServerIsUp() throws Exception {
		setUpDocumentedUser();
		redisServer.server().command("DEL", "distlock:fencing");
		Duration grace = Duration.ofSeconds(1);
		org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> redisServer.server()
			.query("INFO", "server").matches("(?s).*uptime_in_seconds:([3-9]|\\d\\d+)\\b.*"));
		RedisLockRegistry registry = new RedisLockRegistry(factory("s3cret-for-locks"), "distlock",
				LockEngineOptions.builder().watchdogTimeout(WATCHDOG).restartGrace(grace).build());
		this.opened.add(registry);
		DistLock lock = registry.getLock("acl-up-long");
		assertThat(lock.tryLock(Duration.ZERO)).isTrue();
		lock.unlock();
	}

	/**
	 * A user that may run LASTSAVE but not INFO cannot see how long the server is up: it serves the
	 * grace only for a missing counter, once, and is not locked out by a check it cannot complete.
	 */
	@Test
	void aUserWithoutInfoServesTheGraceOnceAndIsNotLockedOut() throws Exception {
		setUpUserWithout("+info");
		redisServer.server().command("DEL", "distlock:fencing", "distlock:fencing:lastsave");
		RedisLockRegistry registry = new RedisLockRegistry(factory("s3cret-for-locks"), "distlock",
				LockEngineOptions.builder().watchdogTimeout(WATCHDOG).restartGrace(Duration.ofMillis(500)).build());
		this.opened.add(registry);
		DistLock lock = registry.getLock("acl-no-info");
		assertThat(lock.tryLock(Duration.ofSeconds(10))).as("after the grace the missing counter started").isTrue();
		lock.unlock();
		for (int i = 0; i < 20; i++) {
			assertThat(lock.tryLock(Duration.ZERO)).as("acquisition %d", i).isTrue();
			lock.unlock();
		}
	}

	/**
	 * The documented ACL listed no MGET before the restart grace's check read its three keys with one:
	 * a user set up by that list still locks, with one GET each, and is not refused.
	 */
	@Test
	void aUserOfTheEarlierAclWithoutMgetStillServesTheRestartGraceCheck() throws Exception {
		setUpUserWithout("+mget");
		redisServer.server().command("ACL", "LOG", "RESET");
		org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> redisServer.server()
			.query("INFO", "server").matches("(?s).*uptime_in_seconds:([3-9]|\\d\\d+)\\b.*"));
		RedisLockRegistry registry = new RedisLockRegistry(factory("s3cret-for-locks"), "distlock",
				LockEngineOptions.builder().watchdogTimeout(WATCHDOG).restartGrace(Duration.ofSeconds(1)).build());
		this.opened.add(registry);
		DistLock lock = registry.getLock("acl-no-mget");
		assertThat(lock.tryLock(Duration.ofSeconds(10))).isTrue();
		lock.unlock();
		for (int i = 0; i < 5; i++) {
			assertThat(lock.tryLock(Duration.ZERO)).as("acquisition %d", i).isTrue();
			lock.unlock();
		}
		assertThat(redisServer.server().query("ACL", "LOG")).as("the check tried MGET, was refused and fell back")
			.contains("mget");
	}

	/**
	 * The documented ACL listed no RENAME before a release turned its hold into its release marker: a
	 * user set up by that list still releases (a DEL and a SET, as before), and a copy of the release
	 * still finds its marker.
	 */
	@Test
	void aUserOfTheEarlierAclWithoutRenameStillReleasesAndMarksTheRelease() throws Exception {
		setUpUserWithout("+rename");
		redisServer.server().command("ACL", "LOG", "RESET");
		RedisLockRegistry registry = client();
		DistLock lock = registry.getLock("acl-no-rename");
		for (int i = 0; i < 3; i++) {
			assertThat(lock.tryLock(Duration.ofSeconds(10))).as("acquisition %d", i).isTrue();
			lock.unlock();
		}
		assertThat(redisServer.server().query("ACL", "LOG")).as("the release tried RENAME, was refused and fell back")
			.contains("rename");
		// With the watchdog's default lease the client vouches for what the hold has left (15 to 30 s):
		// the marker keeps it, as the renamed hold would.
		RedisLockRegistry defaults = new RedisLockRegistry(factory("s3cret-for-locks"), "distlock",
				LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(30)).build());
		this.opened.add(defaults);
		DistLock kept = defaults.getLock("acl-no-rename-kept");
		kept.lock();
		kept.unlock();
		String marker = redisServer.server().query("KEYS", "distlock:{acl-no-rename-kept}:released:*").strip();
		assertThat(redisServer.server().query("TYPE", marker)).isEqualTo("string");
		assertThat(Long.parseLong(redisServer.server().query("PTTL", marker).strip())).as("the marker's life")
			.isGreaterThan(15_000)
			.isLessThanOrEqualTo(30_000);
		RedisLockBackend backend = new RedisLockBackend(factory("s3cret-for-locks"), "distlock");
		this.opened.add(backend::close);
		assertThat(backend.acquire(new AcquireRequest("acl-copy", "a:1", 0, WATCHDOG, Duration.ZERO, "t-1")).status())
			.isEqualTo(Acquisition.Status.ACQUIRED);
		ReleaseRequest release = new ReleaseRequest("acl-copy", "a:1", 1, "t-1", Acquisition.NO_TOKEN, null,
				HoldKind.EXCLUSIVE, 20_000);
		assertThat(backend.release(release)).isEqualTo(Release.RELEASED);
		assertThat(backend.release(release)).as("the copy").isEqualTo(Release.RELEASED);
	}

	private RedisLockRegistry client() {
		RedisLockRegistry registry = new RedisLockRegistry(factory("s3cret-for-locks"), "distlock",
				LockEngineOptions.builder().watchdogTimeout(WATCHDOG).build());
		this.opened.add(registry);
		return registry;
	}

}
