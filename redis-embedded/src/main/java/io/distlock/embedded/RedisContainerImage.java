package io.distlock.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * A Redis image for Testcontainers, made on this machine without any registry: the
 * {@code redis-server} the other fixtures run ({@link RedisServerBinary}) and the shared libraries
 * {@code ldd} lists for it, on an empty base image ({@code FROM scratch}). Docker's layer cache makes
 * every build after the first take a moment. Needs {@code org.testcontainers:testcontainers} on the
 * class path (an optional dependency of this module).
 */
public final class RedisContainerImage {

	/** The image's name, also what {@code @ServiceConnection(name = "redis")} is told it is. */
	public static final String NAME = "distlock/redis-local";

	private static final Pattern LIBRARY = Pattern.compile("(/\\S+)\\s+\\(0x");

	private static ImageFromDockerfile image;

	private RedisContainerImage() {
	}

	/**
	 * @return a container of the image, port 6379 exposed, started once Redis says it is ready (the
	 * image has no shell for Testcontainers' usual port check)
	 */
	public static GenericContainer<?> container() {
		return new GenericContainer<>(image()).withExposedPorts(6379)
			.waitingFor(Wait.forLogMessage(".*Ready to accept connections.*\\n", 1));
	}

	/** @return the image, built at the first container's start */
	static synchronized ImageFromDockerfile image() {
		if (image == null) {
			Path binary = RedisServerBinary.find().toAbsolutePath();
			ImageFromDockerfile built = new ImageFromDockerfile(NAME, false);
			for (Path file : filesOf(binary)) {
				built.withFileFromPath("root" + file, file);
			}
			image = built.withDockerfileFromBuilder(dockerfile -> dockerfile.from("scratch")
				.copy("root/", "/")
				.expose(6379)
				.entryPoint(binary.toString(), "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly",
						"no")
				.build());
		}
		return image;
	}

	/** @return the binary and every library its loader needs, as real files */
	private static List<Path> filesOf(Path binary) {
		Set<Path> files = new LinkedHashSet<>();
		files.add(binary);
		for (String line : ldd(binary)) {
			Matcher library = LIBRARY.matcher(line);
			if (library.find()) {
				files.add(Path.of(library.group(1)));
			}
		}
		return new ArrayList<>(files);
	}

	private static List<String> ldd(Path binary) {
		try {
			Process ldd = new ProcessBuilder("ldd", binary.toString()).redirectErrorStream(true).start();
			String output = new String(ldd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!ldd.waitFor(30, TimeUnit.SECONDS)) {
				ldd.destroyForcibly();
				throw new IllegalStateException("ldd " + binary + " did not finish within 30 s");
			}
			// A static binary ("not a dynamic executable") needs nothing more.
			return output.lines().toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run ldd on " + binary + " to find its libraries", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running ldd", ex);
		}
	}

}
