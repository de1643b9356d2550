package io.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.EnableWebFlux;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;

import io.distlock.LockBackendException;
import io.distlock.LockNotAcquiredException;
import io.distlock.annotation.LockAcquisitionException;

/**
 * A request whose locked method did not get its lock is answered with a problem, not a 500: 409 when
 * another holder kept it, 503 when the backend failed or serves its restart grace, each with a
 * {@code Retry-After}; in Spring MVC and in WebFlux, overridable by the application's own handler,
 * and off with {@code distlock.web.problem-details=false}.
 */
class LockAcquisitionProblemTests {

	private final WebApplicationContextRunner mvc = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistLockWebAutoConfiguration.class))
		.withUserConfiguration(MvcConfiguration.class, Failing.class);

	private final ReactiveWebApplicationContextRunner webflux = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistLockWebAutoConfiguration.class))
		.withUserConfiguration(WebFluxConfiguration.class, Failing.class);

	@Test
	void springMvcAnswersBusyWith409AndAFailedBackendWith503() {
		this.mvc.run(context -> {
			MockMvc client = MockMvcBuilders.webAppContextSetup(context).build();
			client.perform(get("/ship").param("why", "busy"))
				.andExpect(status().isConflict())
				.andExpect(header().string("Retry-After", "1"))
				.andExpect(header().string("Content-Type", "application/problem+json"))
				.andExpect(jsonPath("$.status").value(409))
				.andExpect(jsonPath("$.detail").value("Another request holds the lock this request needs; retry later."));
			client.perform(get("/ship").param("why", "backend"))
				.andExpect(status().isServiceUnavailable())
				.andExpect(header().string("Retry-After", "1"))
				.andExpect(jsonPath("$.title").value("Lock service unavailable"));
			// The grace says when it ends: that is when to come back.
			client.perform(get("/ship").param("why", "grace"))
				.andExpect(status().isServiceUnavailable())
				.andExpect(header().string("Retry-After", "30"));
			client.perform(get("/ship").param("why", "interrupted"))
				.andExpect(status().isServiceUnavailable())
				.andExpect(jsonPath("$.detail").value("The request was interrupted while it waited for a lock; retry later."));
		});
	}

	@Test
	void aLockTakenByHandInAControllerIsAnsweredTheSame() {
		this.mvc.run(context -> {
			MockMvc client = MockMvcBuilders.webAppContextSetup(context).build();
			client.perform(get("/ship").param("why", "refused-by-hand")).andExpect(status().isConflict());
			client.perform(get("/ship").param("why", "backend-by-hand")).andExpect(status().isServiceUnavailable());
		});
	}

	@Test
	void webFluxAnswersTheSame() {
		this.webflux.withPropertyValues("distlock.web.retry-after=5s").run(context -> {
			WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
			client.get().uri("/ship?why=busy").exchange()
				.expectStatus().isEqualTo(HttpStatus.CONFLICT)
				.expectHeader().valueEquals("Retry-After", "5")
				.expectBody().jsonPath("$.status").isEqualTo(409);
			client.get().uri("/ship?why=backend").exchange()
				.expectStatus().isEqualTo(HttpStatus.SERVICE_UNAVAILABLE)
				.expectHeader().valueEquals("Retry-After", "5");
		});
	}

	@Test
	void theApplicationsOwnHandlerTakesPrecedence() {
		this.mvc.withUserConfiguration(OwnHandler.class).run(context -> {
			MockMvc client = MockMvcBuilders.webAppContextSetup(context).build();
			client.perform(get("/ship").param("why", "busy")).andExpect(status().isTooManyRequests());
		});
	}

	@Test
	void itCanBeTurnedOff() {
		this.mvc.withPropertyValues("distlock.web.problem-details=false").run(context -> {
			assertThat(context).doesNotHaveBean(LockAcquisitionProblemHandler.class);
		});
		this.mvc.run(context -> assertThat(context).hasSingleBean(LockAcquisitionProblemHandler.class));
	}

	@Test
	void aRetryAfterOfZeroFailsNamingTheProperty() {
		this.mvc.withPropertyValues("distlock.web.retry-after=0s").run(context -> assertThat(context).getFailure()
			.rootCause().hasMessageContaining("distlock.web.retry-after"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebMvc
	@EnableConfigurationProperties(DistLockProperties.class)
	static class MvcConfiguration {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebFlux
	@EnableConfigurationProperties(DistLockProperties.class)
	static class WebFluxConfiguration {

	}

	@RestController
	static class Failing {

		@GetMapping("/ship")
		String ship(@RequestParam String why) throws Exception {
			Method method = Failing.class.getDeclaredMethod("ship", String.class);
			Throwable cause = switch (why) {
				case "busy" -> null;
				case "backend", "backend-by-hand" -> new LockBackendException("order:7", "Redis at localhost:1 did not answer", null);
				case "interrupted" -> new InterruptedException();
				case "refused-by-hand" -> new LockNotAcquiredException("order:7", Duration.ofMillis(10));
				default -> new LockNotAcquiredException("order:7", Duration.ofMillis(10),
						Instant.now().plusSeconds(29).plusMillis(900));
			};
			if (why.endsWith("by-hand")) {
				// What executeLocked and ReactiveLocks throw in a controller.
				throw (RuntimeException) cause;
			}
			throw new LockAcquisitionException(List.of("order:7"), method, Duration.ofMillis(10), cause);
		}

	}

	@ControllerAdvice
	static class OwnHandler {

		@ExceptionHandler(LockAcquisitionException.class)
		ResponseEntity<String> tooMany(LockAcquisitionException ex) {
			return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).body("later");
		}

	}

}
