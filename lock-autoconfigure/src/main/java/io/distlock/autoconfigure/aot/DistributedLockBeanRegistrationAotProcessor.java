package io.distlock.autoconfigure.aot;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.util.ReflectionUtils;

import io.distlock.annotation.ClusterSingleton;
import io.distlock.annotation.DistributedLock;

/**
 * Registers, for a native image, reflection on every bean method that carries
 * {@code @DistributedLock} or {@code @ClusterSingleton} (directly or through a meta-annotation):
 * the aspect reads their annotations and parameter names, and their key and fallback expressions
 * call the method's arguments and bean, which only the application knows.
 */
class DistributedLockBeanRegistrationAotProcessor implements BeanRegistrationAotProcessor {

	@Override
	public BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> beanClass = registeredBean.getBeanClass();
		List<Method> locked = lockedMethods(beanClass);
		if (locked.isEmpty()) {
			return null;
		}
		return (generationContext, code) -> registerHints(beanClass, locked, generationContext.getRuntimeHints());
	}

	/** @return the methods of {@code beanClass} and its superclasses that the aspect locks */
	static List<Method> lockedMethods(Class<?> beanClass) {
		List<Method> locked = new ArrayList<>();
		ReflectionUtils.doWithMethods(beanClass, locked::add, method -> {
			MergedAnnotations annotations = MergedAnnotations.from(method, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY);
			return annotations.isPresent(DistributedLock.class) || annotations.isPresent(ClusterSingleton.class);
		});
		return locked;
	}

	static void registerHints(Class<?> beanClass, List<Method> locked, RuntimeHints hints) {
		for (Method method : locked) {
			hints.reflection().registerMethod(method, ExecutableMode.INVOKE);
		}
		// Fallback expressions may call the bean's own public methods.
		hints.reflection().registerType(beanClass,
				builder -> builder.withMembers(MemberCategory.INVOKE_PUBLIC_METHODS));
	}

}
