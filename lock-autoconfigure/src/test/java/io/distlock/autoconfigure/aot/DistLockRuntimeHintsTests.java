package io.distlock.autoconfigure.aot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

import io.distlock.annotation.ClusterSingleton;
import io.distlock.annotation.DistributedLock;
import io.distlock.aop.LockExpressionRoot;

/**
 * What a native image needs is registered: every script and schema the library reads from the
 * classpath, the annotations and the expressions' root, and each locked method of the application's
 * beans, found ahead of time.
 */
class DistLockRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	@Test
	void everyScriptAndSchemaTheLibraryReadsIsAResourceOfTheImage() throws IOException {
		new DistLockRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
		PathMatchingResourcePatternResolver resolver = new PathMatchingResourcePatternResolver();
		List<Resource> files = new ArrayList<>(List.of(resolver.getResources("classpath*:io/distlock/**/*.lua")));
		files.addAll(List.of(resolver.getResources("classpath*:io/distlock/**/*.sql")));
		assertThat(files).hasSizeGreaterThanOrEqualTo(9);
		for (Resource file : files) {
			String path = file.getURL().getPath();
			String name = path.substring(path.lastIndexOf("io/distlock/"));
			assertThat(RuntimeHintsPredicates.resource().forResource(name)).as(name).accepts(this.hints);
		}
	}

	@Test
	void theAnnotationsAndTheExpressionsRootAreReflectable() throws NoSuchMethodException {
		new DistLockRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
		assertThat(RuntimeHintsPredicates.reflection().onType(DistributedLock.class)
			.withMemberCategory(MemberCategory.INVOKE_DECLARED_METHODS)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(ClusterSingleton.class)
			.withMemberCategory(MemberCategory.INVOKE_DECLARED_METHODS)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethod(LockExpressionRoot.class.getMethod("getArgs")))
			.accepts(this.hints);
	}

	@Test
	void aBeansLockedMethodsAreFoundAheadOfTimeAndMadeInvocable() throws NoSuchMethodException {
		List<Method> locked = DistributedLockBeanRegistrationAotProcessor.lockedMethods(Shipping.class);
		Method ship = Shipping.class.getMethod("ship", String.class);
		Method report = Shipping.class.getMethod("report");
		assertThat(locked).containsExactlyInAnyOrder(ship, report);

		DistributedLockBeanRegistrationAotProcessor.registerHints(Shipping.class, locked, this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethod(ship)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethod(report)).accepts(this.hints);
		assertThat(DistributedLockBeanRegistrationAotProcessor.lockedMethods(String.class)).isEmpty();
	}

	@Test
	void bothAreRegisteredForSpringsAotProcessing() {
		assertThat(AotServices.factories().load(RuntimeHintsRegistrar.class))
			.anyMatch(DistLockRuntimeHints.class::isInstance);
		assertThat(AotServices.factories().load(BeanRegistrationAotProcessor.class))
			.anyMatch(DistributedLockBeanRegistrationAotProcessor.class::isInstance);
	}

	/** A bean with a locked method and a once-per-cluster job. */
	static class Shipping {

		@DistributedLock(key = "'order:' + #orderId")
		public void ship(String orderId) {
		}

		@ClusterSingleton(holdAtLeast = "1s")
		public void report() {
		}

		public void unlocked() {
		}

	}

}
