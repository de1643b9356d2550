package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.distlock.DistLock;
import io.distlock.LockBackendException;
import io.distlock.LockRegistry;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redlock.RedlockLockRegistry;

/**
 * Redis behind TLS and an ACL user, as production runs it: Redlock nodes over {@code rediss://} with
 * the trust of a Spring Boot SSL bundle, and failures (a wrong password, an untrusted certificate, a
 * plain port, a bad node list) that name the node and the real cause and never show a password,
 * neither in exceptions nor in the log.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisSecurityTests {

	static final String PASSWORD = "Pa55-never-printed";

	static final String WRONG_PASSWORD = "Wr0ng-never-printed";

	/** The least-privilege ACL of docs/redis.md. */
	static final String ACL = "on >" + PASSWORD + " ~distlock:* &distlock:* +@scripting +@pubsub +@hash +@list +get +mget +set "
			+ "+pexpire +pttl +exists +del +time +ping +hello +auth +client +select +info +lastsave";

	private static TestCertificates certificates;

	private static final List<RedisServerProcess> servers = new ArrayList<>();

	private static final List<Integer> tlsPorts = new ArrayList<>();

	@BeforeAll
	static void startTlsServers() {
		certificates = TestCertificates.create();
		for (int i = 0; i < 3; i++) {
			int tlsPort = RedisServerProcess.freePort();
			RedisServerProcess server = RedisServerProcess.start(certificates.serverArguments(tlsPort).toArray(String[]::new));
			List<String> acl = new ArrayList<>(List.of("ACL", "SETUSER", "locks"));
			acl.addAll(List.of(ACL.split(" ")));
			assertThat(server.command(acl.toArray(String[]::new))).isEqualTo("+OK");
			servers.add(server);
			tlsPorts.add(tlsPort);
		}
	}

	@AfterAll
	static void stopServers() {
		servers.forEach(RedisServerProcess::close);
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, MovedBootTypes.DATA_REDIS_AUTO_CONFIGURATION,
					DistLockAutoConfiguration.class))
			.withPropertyValues("distlock.restart-grace=0", "distlock.redlock.node-timeout=1s",
					"spring.ssl.bundle.pem.redis.truststore.certificate=file:" + certificates.caCertificate());
	}

	private static String tlsNodes(String password) {
		return "distlock.redlock.nodes=" + String.join(",",
				tlsPorts.stream().map(port -> "rediss://locks:" + password + "@localhost:" + port).toList());
	}

	@Test
	void redlockNodesSpeakTlsWithTheTrustOfAnSslBundle() {
		runner().withPropertyValues(tlsNodes(PASSWORD), "distlock.redlock.ssl.bundle=redis").run(first -> {
			assertThat(first).hasNotFailed().hasSingleBean(RedlockLockRegistry.class);
			runner().withPropertyValues(tlsNodes(PASSWORD), "distlock.redlock.ssl.bundle=redis").run(second -> {
				DistLock mine = first.getBean(LockRegistry.class).getLock("tls");
				DistLock theirs = second.getBean(LockRegistry.class).getLock("tls");
				assertThat(mine.tryLock(Duration.ofSeconds(5))).isTrue();
				try {
					assertThat(theirs.tryLock(Duration.ofMillis(200))).as("held by the other instance over TLS").isFalse();
				}
				finally {
					mine.unlock();
				}
				assertThat(theirs.tryLock(Duration.ofSeconds(5))).isTrue();
				theirs.unlock();
			});
		});
	}

	@Test
	void aSingleRedisOverTlsFollowsSpringDataRedisSsl() {
		runner().withPropertyValues("spring.data.redis.host=localhost", "spring.data.redis.port=" + tlsPorts.get(2),
				"spring.data.redis.username=locks", "spring.data.redis.password=" + PASSWORD,
				"spring.data.redis.ssl.bundle=redis").run(context -> {
					RedisLockRegistry registry = context.getBean(RedisLockRegistry.class);
					DistLock lock = registry.getLock("single-tls");
					assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
					assertThat(lock.getFencingToken()).isPositive();
					lock.unlock();
					assertThat(registry.backendHealth().up()).isTrue();
				});
	}

	@Test
	void anUntrustedCertificateStopsTheStartNamingTheNodeAndTheFix(CapturedOutput output) {
		runner().withPropertyValues(tlsNodes(PASSWORD)).run(context -> {
			assertThat(context).hasFailed();
			String told = everythingSaid(context.getStartupFailure(), output);
			assertThat(told).contains("distlock.redlock.nodes")
				.contains("TLS handshake with Redis at localhost:" + tlsPorts.get(0))
				.contains("not trusted")
				.contains("distlock.redlock.ssl.bundle");
			assertThat(told).doesNotContain(PASSWORD);
		});
	}

	@Test
	void aWrongPasswordStopsTheStartNamingTheNodeNotThePassword(CapturedOutput output) {
		runner().withPropertyValues(tlsNodes(WRONG_PASSWORD), "distlock.redlock.ssl.bundle=redis").run(context -> {
			assertThat(context).hasFailed();
			String told = everythingSaid(context.getStartupFailure(), output);
			assertThat(told).contains("Redis at localhost:" + tlsPorts.get(0) + " rejected the credentials (WRONGPASS)")
				.contains("rediss://locks:****@localhost:" + tlsPorts.get(0));
			assertThat(told).doesNotContain(WRONG_PASSWORD).doesNotContain(PASSWORD);
		});
	}

	@Test
	void aNodeThatRefusesConnectionsIsToldApartAndTheOthersCarryOn(CapturedOutput output) {
		int nothingThere = RedisServerProcess.freePort();
		String nodes = "distlock.redlock.nodes=rediss://locks:" + PASSWORD + "@localhost:" + tlsPorts.get(0) + ",rediss://locks:"
				+ PASSWORD + "@localhost:" + tlsPorts.get(1) + ",rediss://locks:" + PASSWORD + "@localhost:" + nothingThere;
		runner().withPropertyValues(nodes, "distlock.redlock.ssl.bundle=redis").run(context -> {
			assertThat(context).hasNotFailed();
			assertThat(output.getAll()).contains("1 of 3 Redlock nodes did not answer at start")
				.contains("Nothing accepts connections at localhost:" + nothingThere);
			DistLock lock = context.getBean(LockRegistry.class).getLock("two-of-three");
			assertThat(lock.tryLock(Duration.ofSeconds(5))).isTrue();
			lock.unlock();
			assertThat(output.getAll()).doesNotContain(PASSWORD);
		});
	}

	@Test
	void badNodeListsNeverEchoThePassword(CapturedOutput output) {
		String user = "rediss://locks:" + PASSWORD + "@";
		for (String nodes : List.of(user + "a:6379," + user + "b:6379", user + "a:6379," + user + "b:6379," + user + "A:6379",
				user + "a:6379," + user + "b:6379,rediss://" + PASSWORD + "@c:6379 x",
				// Unencoded characters a pattern over the text would stop at.
				user + "a:6379," + user + "b:6379,rediss://locks:it's," + PASSWORD + "@c:6379")) {
			runner().withPropertyValues("distlock.redlock.nodes=" + nodes).run(context -> {
				assertThat(context).hasFailed();
				String told = everythingSaid(context.getStartupFailure(), output);
				assertThat(told).contains("distlock.redlock.nodes").contains("rediss://locks:****@a:6379");
				assertThat(told).doesNotContain(PASSWORD);
			});
		}
	}

	@Test
	void aWrongPasswordForSpringDataRedisIsToldAtTheFirstLockAndInHealth(CapturedOutput output) {
		RedisServerProcess server = servers.get(0);
		runner().withPropertyValues("spring.data.redis.port=" + server.port(), "spring.data.redis.username=locks",
				"spring.data.redis.password=" + WRONG_PASSWORD, "spring.data.redis.timeout=2s").run(context -> {
					RedisLockRegistry registry = context.getBean(RedisLockRegistry.class);
					LockBackendException failure = null;
					try {
						registry.getLock("auth").tryLock(Duration.ofSeconds(1));
					}
					catch (LockBackendException ex) {
						failure = ex;
					}
					assertThat(failure).as("a lock call with a wrong password").isNotNull();
					assertThat(failure.getMessage()).contains("Redis at localhost:" + server.port()
							+ " rejected the credentials (WRONGPASS)").contains("spring.data.redis.username/password");
					String health = String.valueOf(registry.backendHealth().details());
					assertThat(health).contains("rejected the credentials");
					assertThat(everythingSaid(failure, output) + health).doesNotContain(WRONG_PASSWORD);
				});
	}

	/** Every message of the failure's cause chain and everything logged so far. */
	private static String everythingSaid(Throwable failure, CapturedOutput output) {
		StringBuilder said = new StringBuilder(output.getAll());
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			said.append('\n').append(cause);
			if (cause instanceof InvalidDistLockPropertyException invalid) {
				said.append('\n').append(invalid.getAction());
			}
		}
		return said.toString();
	}

}
