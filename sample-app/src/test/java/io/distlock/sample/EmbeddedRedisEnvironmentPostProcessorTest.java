package io.distlock.sample;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.mock.env.MockEnvironment;

import io.distlock.embedded.RedisServerProcess;

/** What the sample does with the Redis settings a newcomer passes on the command line. */
class EmbeddedRedisEnvironmentPostProcessorTest {

	private final EmbeddedRedisEnvironmentPostProcessor postProcessor = new EmbeddedRedisEnvironmentPostProcessor(
			new DeferredLogs());

	@Test
	void aPortAloneStartsTheSamplesRedisThereWhenNothingAnswers() throws IOException {
		int port = RedisServerProcess.freePort();
		MockEnvironment environment = new MockEnvironment().withProperty("spring.data.redis.port", Integer.toString(port));
		this.postProcessor.postProcessEnvironment(environment, new SpringApplication());
		try {
			assertThat(send(port, "PING")).isEqualTo("+PONG");
			assertThat(environment.getProperty("spring.data.redis.port", Integer.class)).isEqualTo(port);
		}
		finally {
			send(port, "SHUTDOWN NOSAVE");
		}
	}

	@Test
	void aRemoteHostIsLeftAlone() {
		MockEnvironment environment = new MockEnvironment().withProperty("spring.data.redis.host", "redis.example.com")
			.withProperty("spring.data.redis.port", "6390");
		assertThat(EmbeddedRedisEnvironmentPostProcessor.onlyLocalPortConfigured(environment)).isFalse();
		environment = new MockEnvironment().withProperty("spring.data.redis.port", "6390")
			.withProperty("spring.data.redis.sentinel.master", "mymaster");
		assertThat(EmbeddedRedisEnvironmentPostProcessor.onlyLocalPortConfigured(environment)).isFalse();
		environment = new MockEnvironment().withProperty("spring.data.redis.host", "127.0.0.1")
			.withProperty("spring.data.redis.port", "6390");
		assertThat(EmbeddedRedisEnvironmentPostProcessor.onlyLocalPortConfigured(environment)).isTrue();
	}

	private static String send(int port, String command) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
			socket.setSoTimeout(2000);
			socket.getOutputStream().write((command + "\r\n").getBytes(StandardCharsets.UTF_8));
			byte[] reply = new byte[5];
			int read = socket.getInputStream().read(reply);
			return (read > 0) ? new String(reply, 0, read, StandardCharsets.UTF_8).trim() : "";
		}
		catch (IOException ex) {
			if (command.startsWith("SHUTDOWN")) {
				// The server closes the connection as it exits.
				return "";
			}
			throw ex;
		}
	}

}
