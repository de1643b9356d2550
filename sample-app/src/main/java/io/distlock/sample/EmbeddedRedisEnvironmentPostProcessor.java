package io.distlock.sample;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

import io.distlock.embedded.RedisServerBinary;
import io.distlock.embedded.RedisServerProcess;

/**
 * Gives the sample a Redis without any set-up. A Redis on {@code localhost:6379} is used if one
 * answers, else a {@code redis-server} is started there (or on a free port), so that a second
 * instance started the same way shares it. {@code --spring.data.redis.port=6390} alone (no other
 * host) does the same on that port. With a remote host, a URL, Cluster or Sentinel configured, that
 * server is used and nothing else happens: falling back silently would give each instance a
 * private Redis, and private locks protect nothing. {@code sample.embedded-redis.enabled=false}
 * turns all of this off.
 */
public class EmbeddedRedisEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	private final Log log;

	private static final int DEFAULT_PORT = 6379;

	/**
	 * @param logFactory logs that are replayed once logging is set up
	 */
	public EmbeddedRedisEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.log = logFactory.getLog(EmbeddedRedisEnvironmentPostProcessor.class);
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!environment.getProperty("sample.embedded-redis.enabled", Boolean.class, true)) {
			// The connection comes from elsewhere, e.g. a Testcontainers @ServiceConnection.
			return;
		}
		Integer requestedPort = environment.getProperty("sample.embedded-redis.port", Integer.class);
		if (requestedPort != null) {
			// Asked for explicitly (the load test does this for its first instance).
			if (!answersPing(requestedPort)) {
				useEmbedded(environment, RedisServerProcess.startOn(requestedPort));
			}
			else {
				pointAt(environment, "127.0.0.1", requestedPort);
				this.log.info("Using the Redis already running on localhost:" + requestedPort);
			}
			return;
		}
		if (onlyLocalPortConfigured(environment)) {
			int port = environment.getProperty("spring.data.redis.port", Integer.class);
			if (answersPing(port)) {
				this.log.info("Using the Redis already running on localhost:" + port);
			}
			else {
				useEmbedded(environment, RedisServerProcess.startOn(port));
			}
			return;
		}
		if (redisConfigured(environment)) {
			this.log.info("Using the configured Redis (spring.data.redis.*)");
			return;
		}
		if (answersPing(DEFAULT_PORT)) {
			this.log.info("Using the Redis already running on localhost:" + DEFAULT_PORT);
			return;
		}
		useEmbedded(environment, portFree(DEFAULT_PORT) ? RedisServerProcess.startOn(DEFAULT_PORT) : RedisServerProcess.start());
	}

	private void useEmbedded(ConfigurableEnvironment environment, RedisServerProcess server) {
		Runtime.getRuntime().addShutdownHook(new Thread(server::close, "embedded-redis-stop"));
		pointAt(environment, server.host(), server.port());
		// Logged here, through the deferred log, so that it is seen once logging is set up.
		this.log.info("Started an embedded redis-server " + version(server) + " (" + RedisServerBinary.find() + ") on "
				+ server.host() + ":" + server.port() + " for this sample; set spring.data.redis.host to use your own Redis");
	}

	private static String version(RedisServerProcess server) {
		for (String line : server.query("INFO", "server").split("\r?\n")) {
			if (line.startsWith("redis_version:")) {
				return line.substring("redis_version:".length()).trim();
			}
		}
		return "(version unknown)";
	}

	/**
	 * A port given on its own means "the sample's Redis on this port", as for the default one; a host
	 * that is not this machine, a URL, Cluster or Sentinel means somebody else's server.
	 */
	static boolean onlyLocalPortConfigured(ConfigurableEnvironment environment) {
		String host = environment.getProperty("spring.data.redis.host", "localhost");
		return environment.containsProperty("spring.data.redis.port")
				&& (host.equals("localhost") || host.equals("127.0.0.1") || host.equals("::1"))
				&& !environment.containsProperty("spring.data.redis.url")
				&& !environment.containsProperty("spring.data.redis.cluster.nodes")
				&& !environment.containsProperty("spring.data.redis.sentinel.master");
	}

	private static void pointAt(ConfigurableEnvironment environment, String host, int port) {
		environment.getPropertySources()
			.addFirst(new MapPropertySource("embeddedRedis", Map.of("spring.data.redis.host", host, "spring.data.redis.port", port)));
	}

	@Override
	public int getOrder() {
		// After application.yml and the command line are loaded, so that their settings are seen.
		return Ordered.LOWEST_PRECEDENCE;
	}

	private static boolean redisConfigured(ConfigurableEnvironment environment) {
		return environment.containsProperty("spring.data.redis.host") || environment.containsProperty("spring.data.redis.port")
				|| environment.containsProperty("spring.data.redis.url")
				|| environment.containsProperty("spring.data.redis.cluster.nodes")
				|| environment.containsProperty("spring.data.redis.sentinel.master");
	}

	private static boolean answersPing(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 300);
			socket.setSoTimeout(1000);
			socket.getOutputStream().write("PING\r\n".getBytes());
			byte[] reply = new byte[5];
			return socket.getInputStream().read(reply) == 5 && new String(reply).equals("+PONG");
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static boolean portFree(int port) {
		try (java.net.ServerSocket socket = new java.net.ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
