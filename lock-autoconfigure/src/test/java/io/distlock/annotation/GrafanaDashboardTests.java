package io.distlock.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import io.distlock.testing.RedisServerExtension;

/**
 * The Grafana dashboard shipped in {@code grafana/} queries only series that a distlock application
 * really exposes: every {@code distlock_*} name in its queries is in a scrape of
 * {@code /actuator/prometheus} after some locked calls, so a renamed meter breaks this test, not
 * a user's dashboard.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class GrafanaDashboardTests {

	private static final Path DASHBOARD = Path.of("..", "grafana", "distlock-dashboard.json");

	private static final Pattern SERIES = Pattern.compile("distlock_[a-z_]+");

	@RegisterExtension
	static final RedisServerExtension redis = new RedisServerExtension();

	private ConfigurableApplicationContext context;

	@AfterEach
	void close() {
		if (this.context != null) {
			this.context.close();
		}
	}

	@Test
	void everySeriesTheDashboardQueriesIsExposed() throws Exception {
		Set<String> queried = names(Files.readString(DASHBOARD));
		assertThat(queried).as("series in %s", DASHBOARD).hasSizeGreaterThanOrEqualTo(8);

		this.context = new SpringApplicationBuilder(LockTestApplication.class).web(WebApplicationType.SERVLET)
			.properties("spring.data.redis.port=" + redis.server().port(),
					"spring.datasource.url=jdbc:h2:mem:grafana;DB_CLOSE_DELAY=-1", "test.lock-wait=750ms",
					"distlock.restart-grace=0", "spring.main.banner-mode=off", "server.port=0",
					"management.endpoints.web.exposure.include=prometheus")
			.run();
		// Timers exist once used: a locked call, so that acquisitions and holds are timed.
		this.context.getBean(LockedServices.KeyForms.class).named("1");
		Set<String> exposed = names(get("/actuator/prometheus"));

		assertThat(exposed).as("series the application exposes").containsAll(queried);
	}

	private static Set<String> names(String text) {
		Set<String> names = new TreeSet<>();
		Matcher matcher = SERIES.matcher(text);
		while (matcher.find()) {
			names.add(matcher.group());
		}
		return names;
	}

	private String get(String path) throws Exception {
		int port = this.context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).GET().build(),
					HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as("GET %s", path).isEqualTo(200);
		return response.body();
	}

}
