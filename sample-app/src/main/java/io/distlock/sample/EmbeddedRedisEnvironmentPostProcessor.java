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

import io.distlock.embedded.RedisServerProcess;

/**
 * Gives the sample a Redis without any set-up. With {@code spring.data.redis.*} configured, that
 * server is used and nothing else happens: falling back silently would give each instance a
 * private Redis, and private locks protect nothing. Otherwise a Redis on {@code localhost:6379} is
 * used if one answers, else a {@code redis-server} is started there (or on a free port), so that a
 * second instance started the same way shares it.
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
		this.log.info("Started an embedded redis-server on " + server.host() + ":" + server.port()
				+ " for this sample; set spring.data.redis.host/port to use your own Redis");
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
