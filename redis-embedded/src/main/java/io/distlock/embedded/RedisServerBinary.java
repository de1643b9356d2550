package io.distlock.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds a {@code redis-server} executable: the one chosen with {@value #SERVER_PROPERTY} (such as
 * {@code valkey-server}, which speaks the same protocol and takes the same arguments), else the one
 * on {@code PATH} if there is one, otherwise the binary shipped inside the
 * {@code com.github.codemonstur:embedded-redis} jar, extracted once per JVM into a temporary file.
 *
 * <p>Preferring {@code PATH} matters: the packaged binaries are Redis 6.2, while a machine's own
 * server is usually newer and is what the user runs in production.
 */
public final class RedisServerBinary {

	private static final Logger log = LoggerFactory.getLogger(RedisServerBinary.class);

	/** The system property that chooses another server for the tests, such as {@code valkey-server}. */
	public static final String SERVER_PROPERTY = "distlock.redis.server";

	private static volatile Path resolved;

	private RedisServerBinary() {
	}

	/**
	 * Returns an executable {@code redis-server}, extracting the packaged one if needed.
	 * @return the path of the executable
	 * @throws IllegalStateException if neither PATH nor the packaged binaries offer one for this OS
	 */
	public static Path find() {
		Path path = resolved;
		if (path == null) {
			synchronized (RedisServerBinary.class) {
				path = resolved;
				if (path == null) {
					path = fromEnvironmentOverride().or(RedisServerBinary::fromPath).orElseGet(RedisServerBinary::extractPackaged);
					log.info("Using {} as the Redis server", path);
					resolved = path;
				}
			}
		}
		return path;
	}

	/**
	 * The server chosen for this run: the system property {@value #SERVER_PROPERTY} (e.g.
	 * {@code -Ddistlock.redis.server=valkey-server}, which Maven passes on to the tests), else the
	 * environment variable {@code DISTLOCK_REDIS_SERVER}; a path, or a name looked up on {@code PATH}.
	 * A choice that names nothing executable fails rather than quietly testing another server.
	 */
	private static Optional<Path> fromEnvironmentOverride() {
		// A blank property (a build passing it on unset) leaves the choice to the environment.
		String property = System.getProperty(SERVER_PROPERTY);
		String override = (property != null && !property.isBlank()) ? property : System.getenv("DISTLOCK_REDIS_SERVER");
		if (override == null || override.isBlank()) {
			return Optional.empty();
		}
		Optional<Path> chosen = override.contains("/") ? Optional.of(Path.of(override)).filter(Files::isExecutable)
				: onPath(override);
		if (chosen.isEmpty()) {
			throw new IllegalStateException("The server chosen for the tests (" + SERVER_PROPERTY + " or DISTLOCK_REDIS_SERVER: '"
					+ override + "') is not an executable on PATH or at that path; install it (valkey-server comes from "
					+ "Debian's bookworm-backports) or leave the setting out to use redis-server");
		}
		return chosen;
	}

	private static Optional<Path> fromPath() {
		return onPath("redis-server");
	}

	/**
	 * @param name a program's name
	 * @return the first executable of that name in the directories of {@code PATH}, if any
	 */
	public static Optional<Path> onPath(String name) {
		String pathVariable = System.getenv("PATH");
		if (pathVariable == null) {
			return Optional.empty();
		}
		return Stream.of(pathVariable.split(java.io.File.pathSeparator))
			.filter(dir -> !dir.isBlank())
			.map(dir -> Path.of(dir, name))
			.filter(Files::isExecutable)
			.findFirst();
	}

	private static Path extractPackaged() {
		String resource = packagedResourceName();
		try (InputStream in = RedisServerBinary.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("No redis-server on PATH and no packaged binary '" + resource
						+ "' on the classpath; install Redis (e.g. apt-get install redis-server) or add "
						+ "com.github.codemonstur:embedded-redis to the classpath");
			}
			Path target = Files.createTempFile("distlock-redis-server-", "");
			Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
			if (!target.toFile().setExecutable(true)) {
				throw new IllegalStateException("Cannot make " + target + " executable");
			}
			target.toFile().deleteOnExit();
			return target;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not extract the packaged redis-server binary " + resource, ex);
		}
	}

	private static String packagedResourceName() {
		String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
		String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
		boolean arm = arch.contains("aarch64") || arch.contains("arm");
		if (os.contains("mac")) {
			return arm ? "redis-server-6.2.6-v5-darwin-arm64" : "redis-server-6.2.6-v5-darwin-amd64";
		}
		if (os.contains("linux")) {
			return arm ? "redis-server-6.2.7-linux-arm64" : "redis-server-6.2.6-v5-linux-amd64";
		}
		throw new IllegalStateException("No packaged redis-server for " + os + "/" + arch
				+ "; install Redis and put redis-server on PATH");
	}

}
