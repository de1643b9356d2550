package io.distlock.autoconfigure.aot;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;

import io.distlock.annotation.ClusterSingleton;
import io.distlock.annotation.DistributedLock;
import io.distlock.aop.LockExpressionRoot;
import io.distlock.autoconfigure.DistLockProperties;

/**
 * What a native image of an application using distlock needs beyond what Spring's AOT processing
 * finds by itself: the Lua scripts and the table lock's schemas, read from the classpath; the
 * annotations, whose attributes the aspect reads; the root object of key and fallback expressions;
 * and the named registries' properties, which are bound by hand rather than as a
 * {@code @ConfigurationProperties} bean.
 */
public class DistLockRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
		hints.resources().registerPattern("io/distlock/redis/*.lua");
		hints.resources().registerPattern("io/distlock/jdbc/schema-*.sql");
		for (Class<?> annotation : new Class<?>[] { DistributedLock.class, ClusterSingleton.class }) {
			hints.reflection().registerType(annotation, MemberCategory.INVOKE_DECLARED_METHODS);
		}
		hints.reflection().registerType(LockExpressionRoot.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		BindableRuntimeHintsRegistrar.forTypes(DistLockProperties.NamedRegistry.class).registerHints(hints, classLoader);
	}

}
